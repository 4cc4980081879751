package memstore

import (
	"bytes"
	"context"
	"fmt"
	"sync/atomic"
	"testing"

	"github.com/helmstore/helmstore/drivertest"
	"github.com/helmstore/helmstore/helm3"
	"github.com/helmstore/helmstore/internal/engine"
	"github.com/helmstore/helmstore/internal/envelope"
)

var atRestSpaces atomic.Int64

// TestEncryptedAtRest scans memstore's space, every field of every head
// and every part (drivertest.RunAtRest).
func TestEncryptedAtRest(t *testing.T) {
	open := func(t *testing.T, name string, opts ...helm3.Option) helm3.Store {
		s, err := helm3.Open(context.Background(), Name, name, opts...)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	drivertest.RunAtRest(t, drivertest.AtRest{
		New: func(t *testing.T, opts ...helm3.Option) helm3.Store {
			return open(t, fmt.Sprintf("at-rest-%d", atRestSpaces.Add(1)), opts...)
		},
		Again: func(t *testing.T, s helm3.Store, opts ...helm3.Option) helm3.Store {
			return open(t, envelope.Under(engine.Of(s).Backend()).(*memBackend).name, opts...)
		},
		Holds: func(t *testing.T, s helm3.Store, secret []byte) bool {
			sp := envelope.Under(engine.Of(s).Backend()).(*memBackend).s
			sp.mu.RLock()
			defer sp.mu.RUnlock()
			for _, recs := range sp.heads {
				for _, r := range recs {
					h := r.head
					fields := fmt.Sprint(h.Name, h.Status, h.Labels, h.ChartName, h.ChartVersion, h.AppVersion, h.Updated, h.Description)
					if bytes.Contains(h.Body, secret) || bytes.Contains([]byte(fields), secret) {
						return true
					}
				}
			}
			for _, parts := range sp.parts {
				for _, p := range parts {
					if bytes.Contains(p.frame, secret) {
						return true
					}
				}
			}
			return false
		},
	})
}
