# ensure.sh: the finding and installing of tools/ensure-redis.sh (sourced by
# it, not run): find a server binary the tests start, as
# internal/testing/testenv/redisenv finds it, or install its Debian package with
# apt-get (as root), or say why not and what to do.
#
# The sourcing script sets, then calls ensure:
#   service   the name its messages start with (redis)
#   envvar    the variable naming the binary's path (HELMSTORE_REDIS_SERVER)
#   binary    its name on PATH; default_path where Debian installs it
#   package   the Debian package that brings it
#   todo      what a user can do instead
#   skipping  which tests skip without it
# and defines check PATH: sets desc to how to describe the binary found (its
# version, ...), or calls missing when it will not do. needs_install, when
# defined, says (status 0) that something besides the binary is missing
# that the package installs.
#
# Exit status: 0 when the binary is there (or missing but
# HELMSTORE_REQUIRE_SERVICES is not 1: the other tests still run and these
# skip), 1 when it is missing and HELMSTORE_REQUIRE_SERVICES=1.
set -u

missing() {
	echo "$service: $1." >&2
	echo "$service: to fix: $todo." >&2
	if [ "${HELMSTORE_REQUIRE_SERVICES:-}" = 1 ]; then
		echo "$service: HELMSTORE_REQUIRE_SERVICES=1: stopping here." >&2
		exit 1
	fi
	echo "$service: going on without it: $skipping (set HELMSTORE_REQUIRE_SERVICES=1 to fail instead); the other tests run." >&2
	exit 0
}

# locate prints the binary the tests will use, if there is one: $envvar when
# set (if it is an executable file), else $binary on PATH, else $default_path.
locate() {
	eval "named=\${$envvar:-}"
	if [ -n "$named" ]; then
		[ -f "$named" ] && [ -x "$named" ] && echo "$named"
		return 0
	fi
	if p=$(command -v "$binary" 2>/dev/null) && [ -n "$p" ]; then
		echo "$p"
	elif [ -f "$default_path" ] && [ -x "$default_path" ]; then
		echo "$default_path"
	fi
}

# found PATH: says which binary the tests will use (check may refuse it).
found() {
	check "$1"
	echo "$service: using $desc"
	exit 0
}

ensure() {
	command -v needs_install >/dev/null 2>&1 || needs_install() { return 1; }
	eval "named=\${$envvar:-}"
	p=$(locate)
	if [ -n "$named" ]; then
		[ -n "$p" ] || missing "$envvar=$named is not an executable file"
		found "$p"
	fi
	if [ -n "$p" ] && ! needs_install; then
		found "$p"
	fi

	what="${what:-$binary is not installed (not on PATH, no $default_path, $envvar not set)}"
	command -v apt-get >/dev/null 2>&1 || missing "$what, and there is no apt-get here to install Debian's $package with"
	[ "$(id -u)" = 0 ] || missing "$what, and installing Debian's $package needs root (this runs as $(id -un))"

	echo "$service: $what: installing Debian's $package (apt-get install; about a minute, with an apt-get update first if the package is unknown)"
	log=$(mktemp "${TMPDIR:-/tmp}/helmstore-$service-install.XXXXXX")
	trap 'rm -f "$log"' EXIT
	export DEBIAN_FRONTEND=noninteractive
	if ! apt-get install -y "$package" >"$log" 2>&1; then
		if ! { apt-get update >>"$log" 2>&1 && apt-get install -y "$package" >>"$log" 2>&1; }; then
			echo "$service: apt-get's last lines:" >&2
			tail -n 15 "$log" | sed 's/^/  /' >&2
			missing "$what, and apt-get install $package failed (see its output above)"
		fi
	fi
	p=$(locate)
	[ -n "$p" ] || missing "apt-get installed $package, but no $binary is on PATH or at $default_path"
	found "$p"
}
