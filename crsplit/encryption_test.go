package crsplit

import (
	"testing"

	"github.com/helmstore/helmstore/drivertest"
	"github.com/helmstore/helmstore/helm3"
	"github.com/helmstore/helmstore/internal/testing/testenv/kubeenv"
)

// TestEncryptedAtRest scans every helmstore object in the cluster, each
// string of its JSON as it is and base64-decoded (how []byte fields are
// stored) (drivertest.RunAtRest). It leaves no encrypted object behind
// (wipeAtEnd).
func TestEncryptedAtRest(t *testing.T) {
	wipeAtEnd(t)
	k := cluster(t)
	for _, ns := range drivertest.Namespaces {
		ensureNamespace(t, k, ns)
	}
	drivertest.RunAtRest(t, drivertest.AtRest{
		New: func(t *testing.T, opts ...helm3.Option) helm3.Store {
			s, b := openAs(t, k, kubeenv.Admin, helm3.DefaultNamespace, opts...)
			wipe(t, b)
			return s
		},
		Again: func(t *testing.T, _ helm3.Store, opts ...helm3.Option) helm3.Store {
			s, _ := openAs(t, k, kubeenv.Admin, helm3.DefaultNamespace, opts...)
			return s
		},
		Holds: func(t *testing.T, s helm3.Store, secret []byte) bool {
			b := kubeBackendOf(s)
			for _, res := range allResources {
				for _, raw := range rawObjects(t, b, res, "") {
					if drivertest.JSONHolds(t, raw, secret) {
						return true
					}
				}
			}
			return false
		},
	})
}
