package backend

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/helmstore/helmstore/helm3"
	"k8s.io/apimachinery/pkg/util/validation"
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
		return "", 0, helm3.ErrInvalidKey
	}
	name, ver := rest[:i], rest[i+2:]
	version, err = strconv.Atoi(ver)
	if err != nil || version < 0 || strconv.Itoa(version) != ver {
		return "", 0, helm3.ErrInvalidKey
	}
	return name, version, nil
}

// checkName validates a release name as Kubernetes validates object names
// (Helm's own names are a subset).
func checkName(name string) error {
	if name == "" {
		return fmt.Errorf("release has no name")
	}
	if errs := validation.IsDNS1123Subdomain(name); len(errs) > 0 {
		return fmt.Errorf("invalid release name %q: %s", name, strings.Join(errs, "; "))
	}
	return nil
}

// checkNamespace validates a namespace as Kubernetes does.
func checkNamespace(ns string) error {
	if errs := validation.IsDNS1123Label(ns); len(errs) > 0 {
		return fmt.Errorf("invalid namespace %q: %s", ns, strings.Join(errs, "; "))
	}
	return nil
}
