package cosmos

import (
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"helm.sh/helm/v3/pkg/release"

	"github.com/helmstore/helmstore/driver"
	"github.com/helmstore/helmstore/helm3"
)

// stallReplaces is a per-call policy that, while on, holds every replace
// (PUT) of a head item (partition key h/...: the commit of a Create) until
// its context ends, as a connection that stopped answering would.
type stallReplaces struct{ on atomic.Bool }

func (s *stallReplaces) Do(req *policy.Request) (*http.Response, error) {
	r := req.Raw()
	if s.on.Load() && r.Method == http.MethodPut && strings.Contains(r.URL.Path, "/docs/") &&
		strings.HasPrefix(r.Header.Get("x-ms-documentdb-partitionkey"), `["h/`) {
		<-r.Context().Done()
		return nil, r.Context().Err()
	}
	return req.Next()
}

// logLines collects a store's log.
type logLines struct {
	mu    sync.Mutex
	lines []string
}

func (l *logLines) log(format string, v ...interface{}) {
	l.mu.Lock()
	l.lines = append(l.lines, fmt.Sprintf(format, v...))
	l.mu.Unlock()
}

func (l *logLines) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return strings.Join(l.lines, "\n")
}

// TestStuckCommitBounded: a Create's background commit that hangs holds up
// neither a Delete of the release past the Delete's deadline (it fails as
// unavailable: not with the bare context error, not "not found"), nor
// Close past the store's timeout (Close says in the log what it left,
// and another store finds the release whole).
func TestStuckCommitBounded(t *testing.T) {
	const bound = 2 * time.Second
	conn := connString(t)
	stall := &stallReplaces{}
	var logs logLines
	s, _ := openTest(t, conn, options{perCall: []policy.Policy{stall}}, helm3.WithTimeout(bound), func(c *driver.Config) { c.Log = logs.log })
	ns := s.Namespace("stuck")
	k := driver.MakeKey("app", 1)
	stall.on.Store(true)
	if err := ns.Create(k, smallRelease("app", "stuck", 1, release.StatusDeployed)); err != nil {
		t.Fatalf("create (its commit hangs in the background): %v", err)
	}
	start := time.Now()
	_, err := ns.Delete(k)
	if took := time.Since(start); took > 3*bound {
		t.Errorf("Delete waiting for a stuck commit took %v; want about its deadline, %v", took.Round(time.Millisecond), bound)
	}
	if err == nil || !errors.Is(err, helm3.ErrUnavailable) || errors.Is(err, helm3.ErrReleaseNotFound) {
		t.Errorf("Delete waiting for a stuck commit: %v; want helm3.ErrUnavailable", err)
	}
	t.Logf("Delete: %v", err)
	closed := make(chan error, 1)
	start = time.Now()
	go func() { closed <- s.Close() }()
	select {
	case err := <-closed:
		if err != nil {
			t.Errorf("Close: %v", err)
		}
		t.Logf("Close with a stuck commit returned after %v", time.Since(start).Round(time.Millisecond))
	case <-time.After(3 * bound):
		t.Errorf("Close waited more than %v for a stuck commit; want it bounded by the store's timeout, %v", 3*bound, bound)
		<-closed
	}
	if !strings.Contains(logs.String(), k) {
		t.Errorf("Close left the commit of %s unfinished without saying so in the log:\n%s", k, logs.String())
	}
	t.Logf("log: %s", logs.String())

	o, _ := openTest(t, conn, options{})
	defer o.Close()
	if _, err := o.Namespace("stuck").Get(k); err != nil {
		t.Fatalf("another store's get of the release whose commit was stopped: %v", err)
	}
	if _, err := o.Namespace("stuck").Delete(k); err != nil {
		t.Fatalf("another store's delete of it: %v", err)
	}
}
