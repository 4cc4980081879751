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

	"github.com/helmstore/helmstore/driver"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"

	"github.com/helmstore/helmstore/cas"
	"github.com/helmstore/helmstore/helm3"
	"github.com/helmstore/helmstore/internal/testing/castest"
)

// errDied is what every request of a writer that "died" fails with.
var errDied = errors.New("the writer process died (crash-point test)")

// killSwitch is a per-call policy of a writer's client: it lets the first
// limit item writes through (create, replace, upsert, patch, delete; not
// reads or queries), then fails every request of that client, the
// limit+1-th write included, without sending it: the process died between
// two writes. A limit below 0 never kills.
type killSwitch struct {
	limit  int64
	writes atomic.Int64
	dead   atomic.Bool
}

func (k *killSwitch) Do(req *policy.Request) (*http.Response, error) {
	if k.dead.Load() {
		return nil, errDied
	}
	if isItemWrite(req.Raw()) && k.writes.Add(1) > k.limit && k.limit >= 0 {
		k.dead.Store(true)
		return nil, errDied
	}
	return req.Next()
}

// isItemWrite reports whether r writes an item.
func isItemWrite(r *http.Request) bool {
	if !strings.Contains(r.URL.Path, "/docs") {
		return false
	}
	switch r.Method {
	case http.MethodPut, http.MethodPatch, http.MethodDelete:
		return true
	case http.MethodPost:
		return r.Header.Get("x-ms-documentdb-query") == "" &&
			r.Header.Get("x-ms-cosmos-is-query-plan-request") == "" && !strings.HasPrefix(r.Header.Get("Content-Type"), "application/query+json")
	}
	return false
}

// crashProtocol is castest's crash-point configuration: parts and bodies
// over a few hundred bytes go to chunks, so the scenarios' small releases
// take every write path of the protocol; retries are fast.
var crashProtocol = cas.Config{
	InlinePartBytes: 256, InlineBodyBytes: 256, ChunkBytes: 512,
	Retry:          cas.Retry{First: time.Millisecond, Max: 20 * time.Millisecond, NoDeadline: 10 * time.Second},
	CleanupTimeout: 20 * time.Second,
}

// crashRun is one run of a scenario on a new container, the writer dying
// after its limit-th item write.
type crashRun struct {
	sc    castest.Scenario
	limit int64
	// wrap, if set, wraps every client's object store (to break it on
	// purpose).
	wrap func(cas.ObjectStore) cas.ObjectStore
}

func (r crashRun) name() string { return fmt.Sprintf("%s/die-after-write-%d", r.sc.Name, r.limit) }

// crashResult is what a run found: the harness's checks
// (castest.CrashRun), and the writer's item writes and whether it died.
type crashResult struct {
	castest.CrashResult
	writes int64 // item writes the writer made (or tried: the fatal one)
	died   bool
}

func quiet(cfg *driver.Config) { cfg.Log = func(string, ...interface{}) {} }

// exec runs r with castest's crash-point harness (castest.CrashRun.Exec):
// setup by a writer that does not die, the scenario's ops by one that dies
// after r.limit item writes, then the checks, by a fresh store, of what a
// reader sees and of what Collect leaves.
func (r crashRun) exec(t *testing.T) crashResult {
	conn := connString(t)
	o := options{protocol: &crashProtocol, wrap: r.wrap}
	ks := &killSwitch{limit: r.limit}
	cr := castest.CrashRun{
		Scenario: r.sc,
		Open: func(cacheBytes int64, clock cas.Clock) (helm3.Store, *cas.Backend) {
			co := o
			if clock != nil {
				p := crashProtocol
				p.Clock = clock
				co.protocol = &p
			}
			s, b := openTest(t, conn, co, quiet, helm3.WithCacheBytes(cacheBytes))
			return s.Namespace(castest.Namespace), b
		},
		Faulted: func() helm3.Store {
			wo := o
			wo.perCall = []policy.Policy{ks}
			s, _ := openTest(t, conn, wo, quiet, helm3.WithTimeout(30*time.Second))
			return s.Namespace(castest.Namespace)
		},
		Injected: func(err error) bool { return errors.Is(err, errDied) },
	}
	res := crashResult{CrashResult: cr.Exec()}
	res.writes, res.died = ks.writes.Load(), ks.dead.Load()
	return res
}

// crashScenarios are the scenarios run on Cosmos DB: an install (sharing
// chart and values with a release already there), one values-only upgrade
// (stored as deltas) and the deletes of two revisions and of the release
// sharing their parts.
func crashScenarios() []castest.Scenario {
	vo := castest.ScenarioNamed("values-only-upgrades")
	vo.Name, vo.Ops = "values-only-upgrade", vo.Ops[:3]
	return []castest.Scenario{castest.ScenarioNamed("install"), vo, castest.ScenarioNamed("delete")}
}

// TestCrashPoints: a writer that dies between any two of its item writes
// (every write of an install, a values-only upgrade and a delete, in turn)
// leaves nothing a reader sees half done, and its garbage is collected.
// See crashRun.exec for what is checked.
func TestCrashPoints(t *testing.T) {
	start := time.Now()
	var runs []crashRun
	for _, sc := range crashScenarios() {
		base := crashRun{sc: sc, limit: -1}
		res := base.exec(t)
		if len(res.Violations) > 0 {
			t.Fatalf("%s: %s", base.name(), strings.Join(res.Violations, "\n"))
		}
		if res.writes < int64(len(sc.Ops)) {
			t.Fatalf("%s: %d item writes counted for %d ops: the kill switch does not see the writes", sc.Name, res.writes, len(sc.Ops))
		}
		t.Logf("%s: %d item writes without a crash", sc.Name, res.writes)
		// The count varies a little with the interleaving of parallel
		// writes: go one past it.
		for n := int64(0); n <= res.writes; n++ {
			runs = append(runs, crashRun{sc: sc, limit: n})
		}
	}
	var (
		mu                  sync.Mutex
		died, failed, whole int
	)
	failures := castest.ExecCrashRuns(t, len(runs), 2, func(i int) (string, []string) {
		res := runs[i].exec(t)
		mu.Lock()
		defer mu.Unlock()
		for _, c := range []struct {
			n  *int
			on bool
		}{{&died, res.died}, {&failed, res.Failed}, {&whole, res.Whole}} {
			if c.on {
				*c.n++
			}
		}
		return runs[i].name(), res.Violations
	})
	t.Logf("%d runs in %v: the writer died in %d, an op failed in %d (%d of them visible whole all the same); %d violated an invariant",
		len(runs), time.Since(start).Round(time.Second), died, failed, whole, failures)
	if died == 0 {
		t.Error("the writer never died: the test tests nothing")
	}
}

// TestCrashPointsCatchABrokenProtocol: with heads created without the
// pending label, some crash point of the install leaves a release a
// reader finds with parts missing, and the crash-point checks say so.
func TestCrashPointsCatchABrokenProtocol(t *testing.T) {
	sc := castest.ScenarioNamed("install")
	for n := int64(1); n < 8; n++ {
		r := crashRun{sc: sc, limit: n, wrap: func(s cas.ObjectStore) cas.ObjectStore { return castest.NoPending{ObjectStore: s} }}
		for _, v := range r.exec(t).Violations {
			if strings.Contains(v, "reading back") {
				t.Logf("caught at %s: %.200s", r.name(), v)
				return
			}
		}
	}
	t.Fatal("no crash point of the install reported the release visible with parts missing")
}
