#!/bin/sh
# ensure-redis.sh: the Redis step of `make test` (target `services`).
#
# The redis tests use the Redis on 127.0.0.1:6379 when one answers, but start
# private redis-server processes for everything else (a 3-primary Cluster, TLS,
# ACL users, a server killed and restarted), and redis-cli to create the
# Cluster. They find redis-server as internal/testenv (RedisServerBinary)
# does, and so does this script:
#   1. $HELMSTORE_REDIS_SERVER, the path of a redis-server binary, when set;
#   2. else `redis-server` on PATH;
#   3. else /usr/bin/redis-server (where Debian's redis-server installs it).
# When none is there (or redis-cli is missing), this installs Debian's
# redis-server (which brings redis-tools) with apt-get (as root). When that
# cannot be done it says why and what to do, and exits 0 so the other tests
# still run (the redis tests then skip) -- unless HELMSTORE_REQUIRE_SERVICES=1,
# where it exits 1. It does not start or stop any server.
set -u

todo="install Redis 7 or later (Debian/Ubuntu, as root: apt-get install redis-server) so that redis-server and redis-cli are on PATH, or set HELMSTORE_REDIS_SERVER to redis-server's path"

missing() {
	echo "redis: $1." >&2
	echo "redis: to fix: $todo." >&2
	if [ "${HELMSTORE_REQUIRE_SERVICES:-}" = 1 ]; then
		echo "redis: HELMSTORE_REQUIRE_SERVICES=1: stopping here." >&2
		exit 1
	fi
	echo "redis: going on without it: the redis tests will skip (set HELMSTORE_REQUIRE_SERVICES=1 to fail instead); the other tests run." >&2
	exit 0
}

# server prints the redis-server the tests will use, if there is one.
server() {
	if [ -n "${HELMSTORE_REDIS_SERVER:-}" ]; then
		[ -f "$HELMSTORE_REDIS_SERVER" ] && [ -x "$HELMSTORE_REDIS_SERVER" ] && echo "$HELMSTORE_REDIS_SERVER"
		return
	fi
	if p=$(command -v redis-server 2>/dev/null) && [ -n "$p" ]; then
		echo "$p"
	elif [ -f /usr/bin/redis-server ] && [ -x /usr/bin/redis-server ]; then
		echo /usr/bin/redis-server
	fi
}

# found PATH: says which redis-server the tests will use, refusing one older than 7.
found() {
	v=$("$1" --version 2>/dev/null | sed -n 's/.* v=\([0-9.]*\).*/\1/p' | head -n 1)
	case "$v" in
	"" | [0-6].*) missing "$1 is not Redis 7 or later (its --version says: ${v:-nothing})" ;;
	esac
	command -v redis-cli >/dev/null 2>&1 || missing "redis-cli is not on PATH (the Cluster tests create their cluster with it)"
	echo "redis: using $1 (Redis $v) and $(command -v redis-cli)"
	exit 0
}

if [ -n "${HELMSTORE_REDIS_SERVER:-}" ]; then
	p=$(server)
	[ -n "$p" ] || missing "HELMSTORE_REDIS_SERVER=$HELMSTORE_REDIS_SERVER is not an executable file"
	found "$p"
fi
p=$(server)
if [ -n "$p" ] && command -v redis-cli >/dev/null 2>&1; then
	found "$p"
fi

what="redis-server or redis-cli is not installed (not on PATH, no /usr/bin/redis-server, HELMSTORE_REDIS_SERVER not set)"
command -v apt-get >/dev/null 2>&1 || missing "$what, and there is no apt-get here to install Debian's redis-server with"
[ "$(id -u)" = 0 ] || missing "$what, and installing Debian's redis-server needs root (this runs as $(id -un))"

echo "redis: $what: installing Debian's redis-server (apt-get install; about a minute, with an apt-get update first if the package is unknown)"
log=$(mktemp "${TMPDIR:-/tmp}/helmstore-redis-install.XXXXXX")
trap 'rm -f "$log"' EXIT
export DEBIAN_FRONTEND=noninteractive
if ! apt-get install -y redis-server >"$log" 2>&1; then
	if ! { apt-get update >>"$log" 2>&1 && apt-get install -y redis-server >>"$log" 2>&1; }; then
		echo "redis: apt-get's last lines:" >&2
		tail -n 15 "$log" | sed 's/^/  /' >&2
		missing "$what, and apt-get install redis-server failed (see its output above)"
	fi
fi
p=$(server)
[ -n "$p" ] || missing "apt-get installed redis-server, but no redis-server is on PATH or at /usr/bin/redis-server"
found "$p"
