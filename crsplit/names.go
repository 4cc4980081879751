package crsplit

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strconv"

	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/helmstore/helmstore/driver/backend"
	"github.com/helmstore/helmstore/internal/codec"
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
	_, version, err := backend.ParseKey(key)
	if err != nil {
		return backend.KeyPrefix + hex.EncodeToString(sum[:20])
	}
	return backend.KeyPrefix + hex.EncodeToString(sum[:20]) + ".v" + strconv.Itoa(version)
}

// partResource returns the resource that stores parts of kind k.
func partResource(k codec.Kind) string {
	switch k {
	case codec.KindChart:
		return resCharts
	case codec.KindValues:
		return resValues
	default:
		return resManifests
	}
}

// partKind returns the Kubernetes kind of the objects holding parts of kind k.
func partKind(k codec.Kind) string {
	switch k {
	case codec.KindChart:
		return "Chart"
	case codec.KindValues:
		return "Values"
	default:
		return "Manifest"
	}
}

// partChunkName names chunk i of the part object with the given UID. Naming
// chunks by their owner's UID, not by digest, means a part deleted and
// written again never shares chunks with its former self.
func partChunkName(owner types.UID, i int) string {
	return fmt.Sprintf("%s-%d", owner, i)
}

// releaseChunkName names chunk i of the chunk set id of the Release with
// the given UID.
func releaseChunkName(owner types.UID, id string, i int) string {
	return fmt.Sprintf("%s-%s-%d", owner, id, i)
}
