package cosmos

import (
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"

	"github.com/helmstore/helmstore/driver"
	"github.com/helmstore/helmstore/helm3"
	"github.com/helmstore/helmstore/internal/testing/castest"
)

// stallReplaces is a per-call policy that, while on, holds every replace
// (PUT) of a head item (partition key h/...: the commit of a Create) until
// its context ends, as a connection that stopped answering would.
type stallReplaces struct{ on *atomic.Bool }

func (s stallReplaces) Do(req *policy.Request) (*http.Response, error) {
	r := req.Raw()
	if s.on.Load() && r.Method == http.MethodPut && strings.Contains(r.URL.Path, "/docs/") &&
		strings.HasPrefix(r.Header.Get("x-ms-documentdb-partitionkey"), `["h/`) {
		<-r.Context().Done()
		return nil, r.Context().Err()
	}
	return req.Next()
}

// TestStuckCommitBounded runs castest.StuckCommit on the test server: the
// commit's replace of the head item hangs, and Close is bounded by the
// store's timeout.
func TestStuckCommitBounded(t *testing.T) {
	const bound = 2 * time.Second
	conn := connString(t)
	castest.StuckCommit(t, bound, func(stall *atomic.Bool, log func(string, ...interface{})) helm3.Store {
		s, _ := openTest(t, conn, options{perCall: []policy.Policy{stallReplaces{stall}}}, helm3.WithTimeout(bound),
			func(c *driver.Config) { c.Log = log })
		return s.Namespace(castest.Namespace)
	}, func() helm3.Store {
		s, _ := openTest(t, conn, options{})
		return s.Namespace(castest.Namespace)
	})
}
