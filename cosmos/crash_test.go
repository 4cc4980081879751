package cosmos

import (
	"context"
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
	"github.com/helmstore/helmstore/internal/castest"
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

// crashResult is what a run found.
type crashResult struct {
	violations []string
	writes     int64 // item writes the writer made (or tried: the fatal one)
	died       bool
	failed     bool // an op failed
	whole      bool // the failed op is visible whole all the same
}

func quiet(cfg *driver.Config) { cfg.Log = func(string, ...interface{}) {} }

// exec runs r: setup by a writer that does not die, the scenario's ops by
// one that dies after r.limit item writes, then a fresh store checks what
// a reader sees (castest's Snapshot and Judge: the ops before the failed
// one happened, that one wholly or not at all, nothing pending shows),
// and that once the writer's leftovers are stale (the checking store's
// pending timeout set to 0), Collect commits or removes them without
// changing what readers see, leaves no pending head, and that once every
// release is deleted and collected the container is empty.
func (r crashRun) exec(t *testing.T) crashResult {
	var res crashResult
	bad := func(format string, a ...any) { res.violations = append(res.violations, fmt.Sprintf(format, a...)) }
	conn := connString(t)
	o := options{protocol: &crashProtocol, wrap: r.wrap}
	setup, _ := openTest(t, conn, o, quiet)
	ns := setup.Namespace(castest.Namespace)
	for _, op := range r.sc.Setup {
		if err := op.Run(ns); err != nil {
			bad("setup %s: %v", op, err)
			setup.Close()
			return res
		}
	}
	setup.Close()

	ks := &killSwitch{limit: r.limit}
	wo := o
	wo.perCall = []policy.Policy{ks}
	writer, _ := openTest(t, conn, wo, quiet, helm3.WithTimeout(30*time.Second))
	failed := len(r.sc.Ops)
	var results []string
	for i, op := range r.sc.Ops {
		err := op.Run(writer.Namespace(castest.Namespace))
		results = append(results, fmt.Sprintf("%s: %v", op, err))
		if err != nil {
			failed = i
			if !errors.Is(err, errDied) {
				bad("%s failed, not because the writer died: %v", op, err)
			}
			break
		}
	}
	closed := make(chan struct{})
	go func() { writer.Close(); close(closed) }()
	select {
	case <-closed:
	case <-time.After(2 * time.Minute):
		bad("Close of the dead writer did not return")
	}
	res.writes, res.died, res.failed = ks.writes.Load(), ks.dead.Load(), failed < len(r.sc.Ops)

	allowed := r.sc.Allowed()
	checker, cb := openTest(t, conn, o, quiet, helm3.WithCacheBytes(0))
	defer checker.Close()
	check := checker.Namespace(castest.Namespace)
	seen, err := castest.Snapshot(check, allowed)
	if err != nil {
		bad("reading back: %v", err)
	}
	judged, whole := r.sc.Judge(seen, failed)
	res.violations = append(res.violations, judged...)
	res.whole = res.failed && whole

	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cb.SetPendingTimeout(0) // what the dead writer left is stale
	if err := helm3.Collect(ctx, check); err != nil {
		bad("collect: %v", err)
	}
	after, err := castest.Snapshot(check, allowed)
	if err != nil {
		bad("reading back after collect: %v", err)
	}
	if !castest.Equal(after, seen) {
		bad("collect changed what readers see: before %s, after %s", castest.KeysOf(seen), castest.KeysOf(after))
	}
	st := cb.Store()
	heads, err := st.List(ctx, cas.Selector{Kind: cas.KindHead, Namespace: castest.Namespace})
	if err != nil {
		bad("list heads: %v", err)
	}
	for _, h := range heads {
		if v, ok := h.Labels[cas.LabelPending]; ok {
			bad("head %s still pending (%s) after collect", h.Name, v)
		}
	}
	if len(heads) != len(after) {
		bad("%d head items for %d visible releases after collect", len(heads), len(after))
	}
	for k := range after {
		if _, err := check.Delete(k); err != nil {
			bad("delete %s: %v", k, err)
		}
	}
	if err := helm3.Collect(ctx, check); err != nil {
		bad("collect after deleting everything: %v", err)
	}
	if left := itemsLeft(ctx, st); left != "" {
		bad("items left after every release was deleted and collected: %s", left)
	}
	if len(res.violations) > 0 {
		res.violations = append(res.violations, "ops: "+strings.Join(results, "; "))
	}
	return res
}

// itemsLeft describes the items of the store's container, "" if none.
func itemsLeft(ctx context.Context, st cas.ObjectStore) string {
	var out []string
	for _, k := range []cas.Kind{cas.KindHead, cas.KindChart, cas.KindValues, cas.KindManifest, cas.KindChunk} {
		objs, err := st.List(ctx, cas.Selector{Kind: k, Meta: true})
		if err != nil {
			return fmt.Sprintf("(list %s: %v)", kindName(k), err)
		}
		for _, o := range objs {
			out = append(out, kindName(k)+" "+o.Namespace+"/"+o.Name)
		}
	}
	return strings.Join(out, ", ")
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
		if len(res.violations) > 0 {
			t.Fatalf("%s: %s", base.name(), strings.Join(res.violations, "\n"))
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
		failures            []string
		died, failed, whole int
		next                atomic.Int64
		wg                  sync.WaitGroup
	)
	for w := 0; w < 2; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := int(next.Add(1) - 1); i < len(runs); i = int(next.Add(1) - 1) {
				res := runs[i].exec(t)
				mu.Lock()
				if res.died {
					died++
				}
				if res.failed {
					failed++
				}
				if res.whole {
					whole++
				}
				if len(res.violations) > 0 {
					failures = append(failures, runs[i].name()+":\n  "+strings.Join(res.violations, "\n  "))
				}
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	t.Logf("%d runs in %v: the writer died in %d, an op failed in %d (%d of them visible whole all the same); %d violated an invariant",
		len(runs), time.Since(start).Round(time.Second), died, failed, whole, len(failures))
	if died == 0 {
		t.Error("the writer never died: the test tests nothing")
	}
	for i, f := range failures {
		if i == 5 {
			t.Errorf("... and %d more", len(failures)-5)
			break
		}
		t.Error(f)
	}
}

// TestCrashPointsCatchABrokenProtocol: with heads created without the
// pending label, some crash point of the install leaves a release a
// reader finds with parts missing, and the crash-point checks say so.
func TestCrashPointsCatchABrokenProtocol(t *testing.T) {
	sc := castest.ScenarioNamed("install")
	for n := int64(1); n < 8; n++ {
		r := crashRun{sc: sc, limit: n, wrap: func(s cas.ObjectStore) cas.ObjectStore { return castest.NoPending{ObjectStore: s} }}
		for _, v := range r.exec(t).violations {
			if strings.Contains(v, "reading back") {
				t.Logf("caught at %s: %.200s", r.name(), v)
				return
			}
		}
	}
	t.Fatal("no crash point of the install reported the release visible with parts missing")
}
