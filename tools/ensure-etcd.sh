#!/bin/sh
# ensure-etcd.sh: the etcd step of `make test` (target `services`).
#
# The crsplit tests run a real kube-apiserver on etcd 3.4 or later. They find
# etcd as internal/testenv (findEtcd) does, and so does this script:
#   1. $HELMSTORE_ETCD, the path of an etcd binary, when set;
#   2. else `etcd` on PATH;
#   3. else /usr/bin/etcd (where Debian's etcd-server installs it).
# When none is there, this installs Debian's etcd-server with apt-get (as root).
# When that cannot be done (no apt-get, not root, apt-get fails) it says why and
# what to do, and exits 0 so the other tests still run (the crsplit tests then
# skip with the same advice) -- unless HELMSTORE_REQUIRE_SERVICES=1, where it
# exits 1.
set -u

todo="install etcd 3.4 or later (Debian/Ubuntu, as root: apt-get install etcd-server) and put it on PATH, or set HELMSTORE_ETCD to its path"

missing() {
	echo "etcd: $1." >&2
	echo "etcd: to fix: $todo." >&2
	if [ "${HELMSTORE_REQUIRE_SERVICES:-}" = 1 ]; then
		echo "etcd: HELMSTORE_REQUIRE_SERVICES=1: stopping here." >&2
		exit 1
	fi
	echo "etcd: going on without it: the crsplit tests will skip (set HELMSTORE_REQUIRE_SERVICES=1 to fail instead); the other tests run." >&2
	exit 0
}

# found PATH: says which etcd the tests will use, refusing one older than 3.4.
found() {
	v=$("$1" --version 2>/dev/null | sed -n 's/^etcd Version: *//p' | head -n 1)
	case "$v" in
	"" | 3.[0-3] | 3.[0-3].* | [0-2].*) missing "$1 is not etcd 3.4 or later (its --version says: ${v:-nothing})" ;;
	esac
	echo "etcd: using $1 (etcd $v)"
	exit 0
}

if [ -n "${HELMSTORE_ETCD:-}" ]; then
	if [ -f "$HELMSTORE_ETCD" ] && [ -x "$HELMSTORE_ETCD" ]; then
		found "$HELMSTORE_ETCD"
	fi
	missing "HELMSTORE_ETCD=$HELMSTORE_ETCD is not an executable file"
fi
if p=$(command -v etcd 2>/dev/null) && [ -n "$p" ]; then
	found "$p"
fi
if [ -f /usr/bin/etcd ] && [ -x /usr/bin/etcd ]; then
	found /usr/bin/etcd
fi

what="etcd is not installed (not on PATH, no /usr/bin/etcd, HELMSTORE_ETCD not set)"
command -v apt-get >/dev/null 2>&1 || missing "$what, and there is no apt-get here to install Debian's etcd-server with"
[ "$(id -u)" = 0 ] || missing "$what, and installing Debian's etcd-server needs root (this runs as $(id -un))"

echo "etcd: $what: installing Debian's etcd-server (apt-get install; about a minute, with an apt-get update first if the package is unknown)"
log=$(mktemp "${TMPDIR:-/tmp}/helmstore-etcd-install.XXXXXX")
trap 'rm -f "$log"' EXIT
export DEBIAN_FRONTEND=noninteractive
if ! apt-get install -y etcd-server >"$log" 2>&1; then
	if ! { apt-get update >>"$log" 2>&1 && apt-get install -y etcd-server >>"$log" 2>&1; }; then
		echo "etcd: apt-get's last lines:" >&2
		tail -n 15 "$log" | sed 's/^/  /' >&2
		missing "$what, and apt-get install etcd-server failed (see its output above)"
	fi
fi
if p=$(command -v etcd 2>/dev/null) && [ -n "$p" ]; then
	found "$p"
fi
if [ -f /usr/bin/etcd ] && [ -x /usr/bin/etcd ]; then
	found /usr/bin/etcd
fi
missing "apt-get installed etcd-server, but no etcd binary is on PATH or at /usr/bin/etcd"
