package sql

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/helmstore/helmstore/driver"

	"github.com/helmstore/helmstore/helm3"
)

var probeOnce sync.Once

// A store opened with no options bounds its operations (DefaultTimeout);
// WithTimeout(0) removes the bound. Before, the default was no bound: a Get
// on a blackholed PostgreSQL connection blocked for more than 6 minutes.
func TestDefaultTimeout(t *testing.T) {
	var got time.Duration
	probeOnce.Do(func() {
		driver.Register("timeout-probe", func(ctx context.Context, cfg *driver.Config) (driver.Backend, error) {
			got = cfg.Timeout
			return nil, errors.New("probe")
		})
	})
	helm3.Open(context.Background(), "timeout-probe", "")
	if got <= 0 || got != helm3.DefaultTimeout {
		t.Fatalf("default Timeout %v; want DefaultTimeout (%v), not 0", got, helm3.DefaultTimeout)
	}
	helm3.Open(context.Background(), "timeout-probe", "", helm3.WithTimeout(0))
	if got != 0 {
		t.Fatalf("WithTimeout(0): Timeout %v; want 0 (no bound)", got)
	}
	helm3.Open(context.Background(), "timeout-probe", "", helm3.WithTimeout(3*time.Second))
	if got != 3*time.Second {
		t.Fatalf("WithTimeout(3s): Timeout %v", got)
	}
}
