package crsplit

import (
	"crypto/sha256"
	"encoding/hex"

	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/helmstore/helmstore/driver"
)

// releaseObjectName returns the name of the Release object stored under
// key: the key itself (sh.helm.release.v1.<name>.v<version>, like Helm's
// Secrets), or, for a key longer than a Kubernetes name may be, the same
// form with the release name replaced by a hash of the key. The key is also
// kept in spec.key and checked on read.
func releaseObjectName(key string) string {
	if len(validation.IsDNS1123Subdomain(key)) == 0 {
		return key
	}
	sum := sha256.Sum256([]byte(key))
	_, version, err := driver.ParseKey(key)
	if err != nil {
		return driver.KeyPrefix + hex.EncodeToString(sum[:20])
	}
	return driver.MakeKey(hex.EncodeToString(sum[:20]), version)
}
