package driver

import (
	"strconv"
	"strings"
)

// KeyPrefix starts every Helm 3 release key.
const KeyPrefix = "sh.helm.release.v1."

// MakeKey returns Helm's key for a release name and version.
func MakeKey(name string, version int) string {
	return KeyPrefix + name + ".v" + strconv.Itoa(version)
}

// ParseKey splits a key into release name and version. The version is the
// digits after the last ".v", so names containing ".v" parse too.
func ParseKey(key string) (name string, version int, err error) {
	rest, ok := strings.CutPrefix(key, KeyPrefix)
	i := strings.LastIndex(rest, ".v")
	if !ok || i <= 0 {
		return "", 0, ErrInvalidKey
	}
	name, ver := rest[:i], rest[i+2:]
	version, err = strconv.Atoi(ver)
	if err != nil || version < 0 || strconv.Itoa(version) != ver {
		return "", 0, ErrInvalidKey
	}
	return name, version, nil
}
