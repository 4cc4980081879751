#!/bin/sh
# ensure-redis.sh: the Redis step of `make test` (target `services`).
#
# The redis tests use the Redis on 127.0.0.1:6379 when one answers, but start
# private redis-server processes for everything else (a 3-primary Cluster, a
# primary with a replica and three Sentinels -- redis-server --sentinel, the
# same binary --, TLS, ACL users, a server killed and restarted), and
# redis-cli to create the Cluster. They find redis-server as internal/testing/testenv/redisenv
# (ServerBinary) does, and so does this script:
#   1. $HELMSTORE_REDIS_SERVER, the path of a redis-server binary, when set;
#   2. else `redis-server` on PATH;
#   3. else /usr/bin/redis-server (where Debian's redis-server installs it).
# When none is there (or redis-cli is missing), this installs Debian's
# redis-server (which brings redis-tools) with apt-get (as root). When that
# cannot be done it says why and what to do, and exits 0 so the other tests
# still run (the redis tests then skip) -- unless HELMSTORE_REQUIRE_SERVICES=1,
# where it exits 1. It does not start or stop any server. The finding and
# installing are tools/ensure.sh's.
set -u

service=redis envvar=HELMSTORE_REDIS_SERVER binary=redis-server default_path=/usr/bin/redis-server package=redis-server
todo="install Redis 7 or later (Debian/Ubuntu, as root: apt-get install redis-server) so that redis-server and redis-cli are on PATH, or set HELMSTORE_REDIS_SERVER to redis-server's path"
skipping="the redis tests will skip"
what="redis-server or redis-cli is not installed (not on PATH, no /usr/bin/redis-server, HELMSTORE_REDIS_SERVER not set)"

# check PATH: sets desc; refuses (missing) anything but Redis 7 or later, and redis-cli beside it.
check() {
	v=$("$1" --version 2>/dev/null | sed -n 's/.* v=\([0-9.]*\).*/\1/p' | head -n 1)
	case "$v" in
	"" | [0-6].*) missing "$1 is not Redis 7 or later (its --version says: ${v:-nothing})" ;;
	esac
	command -v redis-cli >/dev/null 2>&1 || missing "redis-cli is not on PATH (the Cluster tests create their cluster with it)"
	desc="$1 (Redis $v) and $(command -v redis-cli)"
}

# needs_install: redis-cli is missing (Debian's redis-server brings it).
needs_install() { ! command -v redis-cli >/dev/null 2>&1; }

case "$0" in
*/*) . "${0%/*}/ensure.sh" ;;
*) . ./ensure.sh ;;
esac
ensure
