#!/bin/sh
# ensure-etcd.sh: the etcd step of `make test` (target `services`).
#
# The crsplit tests run a real kube-apiserver on etcd 3.4 or later. They find
# etcd as internal/testenv/kubeenv (findEtcd) does, and so does this script:
#   1. $HELMSTORE_ETCD, the path of an etcd binary, when set;
#   2. else `etcd` on PATH;
#   3. else /usr/bin/etcd (where Debian's etcd-server installs it).
# When none is there, this installs Debian's etcd-server with apt-get (as root).
# When that cannot be done (no apt-get, not root, apt-get fails) it says why and
# what to do, and exits 0 so the other tests still run (the crsplit tests then
# skip with the same advice) -- unless HELMSTORE_REQUIRE_SERVICES=1, where it
# exits 1. The finding and installing are tools/ensure.sh's, shared with
# ensure-redis.sh.
set -u

service=etcd envvar=HELMSTORE_ETCD binary=etcd default_path=/usr/bin/etcd package=etcd-server
todo="install etcd 3.4 or later (Debian/Ubuntu, as root: apt-get install etcd-server) and put it on PATH, or set HELMSTORE_ETCD to its path"
skipping="the crsplit tests will skip"

# check PATH: sets desc; refuses (missing) anything but etcd 3.4 or later.
check() {
	v=$("$1" --version 2>/dev/null | sed -n 's/^etcd Version: *//p' | head -n 1)
	case "$v" in
	"" | 3.[0-3] | 3.[0-3].* | [0-2].*) missing "$1 is not etcd 3.4 or later (its --version says: ${v:-nothing})" ;;
	esac
	desc="$1 (etcd $v)"
}

case "$0" in
*/*) . "${0%/*}/ensure.sh" ;;
*) . ./ensure.sh ;;
esac
ensure
