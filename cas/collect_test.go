package cas_test

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"helm.sh/helm/v3/pkg/release"

	"github.com/helmstore/helmstore/cas"
	"github.com/helmstore/helmstore/driver"
	"github.com/helmstore/helmstore/helm3"
	"github.com/helmstore/helmstore/internal/casprobe"
	"github.com/helmstore/helmstore/internal/testing/castest"
)

// TestCollectSparesWritesInFlight: helm3.Collect, from another process,
// while a Create or an Update is stopped at each point where it has
// written some of its objects and not others, removes none of them: the
// write then finishes, and the release reads back whole with exact part
// counts.
func TestCollectSparesWritesInFlight(t *testing.T) {
	t.Parallel()
	install := castest.ScenarioNamed("install-new-parts")
	app1d := install.Ops[1].Rel
	k := key("app", 1)
	for _, c := range []struct {
		name  string
		hooks func(pause func()) casprobe.Hooks
		setup []castest.Step
		write castest.Step
	}{
		{"create/before-first-part", func(pause func()) casprobe.Hooks {
			return casprobe.Hooks{BeforePart: func(*driver.Part) error { pause(); return nil }}
		}, nil, install.Ops[0]},
		{"create/before-commit", func(pause func()) casprobe.Hooks {
			return casprobe.Hooks{BeforeCommit: func(*driver.Head) error { pause(); return nil }}
		}, nil, install.Ops[0]},
		{"update/before-head", func(pause func()) casprobe.Hooks {
			return casprobe.Hooks{BeforePut: func(*driver.Head) error { pause(); return nil }}
		}, install.Ops[:1], castest.Step{Call: "update", Key: k, Rel: withOwnValues(app1d)}},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			data := castest.New(nil)
			paused, resume := make(chan struct{}), make(chan struct{})
			pause := func() { close(paused); <-resume }
			cfg := protocol
			var armed atomic.Bool // the first call of the hook pauses
			hooks := c.hooks(func() {
				if armed.CompareAndSwap(true, false) {
					pause()
				}
			})
			b := cas.New(data.Process(nil), cfg)
			castest.Probe(b).Hooks = hooks
			w := helm3.New(b, &driver.Config{Name: "castest", CacheBytes: helm3.DefaultCacheBytes,
				Timeout: 30 * time.Second, Log: func(string, ...interface{}) {}}).Namespace(ns)
			defer w.Close()
			for _, op := range c.setup {
				if err := op.Run(w); err != nil {
					t.Fatalf("setup %s: %v", op, err)
				}
			}
			armed.Store(true)
			done := make(chan error, 1)
			go func() { done <- c.write.Run(w) }()
			select {
			case <-paused:
			case err := <-done:
				t.Fatalf("%s finished without reaching its pause: %v", c.write, err)
			}
			o, _ := open(data.Process(nil), 0)
			defer o.Close()
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			for _, view := range []helm3.Store{o, o.Namespace("")} {
				if err := helm3.Collect(ctx, view); err != nil {
					t.Fatalf("collect while %s is in flight: %v", c.write, err)
				}
			}
			close(resume)
			if err := <-done; err != nil {
				t.Fatalf("%s, after another process collected while it was in flight: %v", c.write, err)
			}
			got, err := o.Get(k)
			if err != nil {
				t.Fatalf("get after %s: %v", c.write, err)
			}
			if castest.Canon(got) != castest.Canon(c.write.Rel) {
				t.Fatalf("get after %s: another release", c.write)
			}
			wantOnly(t, o, c.write.Rel)
		})
	}
}

// withOwnValues returns r with values of its own (a part the Update must
// store).
func withOwnValues(r *release.Release) *release.Release {
	c := *r
	c.Config = map[string]interface{}{"own": "values of this revision"}
	return &c
}

// wantOnly fails t unless s holds exactly r and the parts it references,
// as a store that wrote r alone does.
func wantOnly(t *testing.T, s helm3.Store, r *release.Release) {
	t.Helper()
	ref, _ := open(castest.New(nil), 0)
	defer ref.Close()
	if err := ref.Create(key(r.Name, r.Version), r); err != nil {
		t.Fatal(err)
	}
	want, err := ref.Stats(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	got, err := s.Stats(context.Background())
	if err != nil || !castest.SameStats(got, want) {
		t.Fatalf("the store holds %+v (%v); a store with only %s holds %+v", got, err, key(r.Name, r.Version), want)
	}
}

// TestCollectRemovesWhatADeadWriterLeft: a writer that dies half way
// through a Create leaves a pending head and parts no release uses (Stats
// counts them); once the head is abandoned (its pending window and
// ClockSkew passed: the collecting process's clock is moved past them),
// helm3.Collect on the "" view commits or removes it with its parts, and
// the store is empty again.
func TestCollectRemovesWhatADeadWriterLeft(t *testing.T) {
	t.Parallel()
	const timeout = 30 * time.Second
	var clock castest.Clock
	openWith := func(s cas.ObjectStore, clock cas.Clock) helm3.Store {
		cfg := protocol
		if clock != nil {
			cfg.Clock = clock
		}
		return helm3.New(cas.New(s, cfg), &driver.Config{Name: "castest", CacheBytes: helm3.DefaultCacheBytes, Timeout: timeout,
			Log: func(string, ...interface{}) {}}).Namespace(ns)
	}
	data := castest.New(nil)
	r := castest.ScenarioNamed("install-new-parts").Ops[0].Rel
	w := openWith(data.Process(castest.CrashAt(3)), nil) // the head and two parts
	if err := w.Create(key("app", 1), r); !castest.IsInjected(err) {
		t.Fatalf("create by a writer that dies: %v", err)
	}
	w.Close()
	o := openWith(data.Process(nil), &clock)
	defer o.Close()
	st, err := o.Stats(context.Background())
	if err != nil || st.Releases != 0 || st.TotalParts() == 0 {
		t.Fatalf("after the writer died: %+v, %v; want no release and the parts it wrote", st, err)
	}
	clock.Advance(timeout + cas.DefaultClockSkew + time.Second)
	if err := helm3.Collect(context.Background(), o.Namespace("")); err != nil {
		t.Fatalf("collect: %v", err)
	}
	if n := data.Len(); n != 0 {
		t.Fatalf("%d objects left after collecting what the dead writer left: %v", n, data.Counts())
	}
}
