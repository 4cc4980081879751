package helm3

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/helmstore/helmstore/internal/engine"
	"github.com/helmstore/helmstore/memstore"

	"github.com/helmstore/helmstore/driver"

	"helm.sh/helm/v3/pkg/action"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
)

// newMemBackend returns a backend in memory, for tests of Init that need a
// backend but no server.
func newMemBackend() driver.Backend {
	b, err := memstore.Open(context.Background(), &driver.Config{})
	if err != nil {
		panic(err)
	}
	return b
}

// storeOf returns the backend of the store cfg was set up with: the views
// Init hands out differ, the backend under them is what is shared.
func storeOf(cfg *action.Configuration) driver.Backend {
	return engine.Of(cfg.Releases.Driver).Backend()
}

func countingOpener(n *atomic.Int32) driver.Opener {
	return func(context.Context, *driver.Config) (driver.Backend, error) { n.Add(1); return newMemBackend(), nil }
}

var testDrivers atomic.Int32

// withOpeners registers m's openers under names of their own (the registry
// keeps every name for the life of the process), and returns the name each
// key of m is registered as. The test starts with no store shared by Init.
func withOpeners(t *testing.T, m map[string]driver.Opener) func(string) string {
	names := map[string]string{}
	for n, o := range m {
		names[n] = fmt.Sprintf("%s-%d", n, testDrivers.Add(1))
		driver.Register(names[n], o)
	}
	savedShared := shared
	shared = new(engine.Shared[Store])
	t.Cleanup(func() { shared = savedShared })
	return func(n string) string { return names[n] }
}

// deadlockGuard bounds a wait that only a deadlock could make long; it is
// not a timing assertion (the machine may be slow; two minutes is plenty).
const deadlockGuard = 2 * time.Minute

// A store that is slow to open delays only the Inits that need that very
// store: Init does not hold its lock while a store opens. Inits of the
// slow store share its one Open.
func TestInitDoesNotWaitForOtherStoresToOpen(t *testing.T) {
	entered, release := make(chan struct{}), make(chan struct{})
	var slowOpens, fastOpens atomic.Int32
	name := withOpeners(t, map[string]driver.Opener{
		"slow": func(ctx context.Context, cfg *driver.Config) (driver.Backend, error) {
			if slowOpens.Add(1) == 1 {
				close(entered)
			}
			<-release
			return newMemBackend(), nil
		},
		"fast": countingOpener(&fastOpens),
	})
	defer func() {
		select {
		case <-release:
		default:
			close(release)
		}
	}()
	getter := genericclioptions.NewConfigFlags(false)

	slowCfgs := []*action.Configuration{new(action.Configuration), new(action.Configuration)}
	slowErrs := make([]error, len(slowCfgs))
	var wg sync.WaitGroup
	for i := range slowCfgs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			slowErrs[i] = Init(slowCfgs[i], getter, "ns", name("slow"), nil)
		}()
	}
	select {
	case <-entered:
	case <-time.After(deadlockGuard):
		t.Fatal("the slow store's opener was never called")
	}

	fastDone := make(chan error, 1)
	go func() { fastDone <- Init(new(action.Configuration), getter, "ns", name("fast"), nil) }()
	select {
	case err := <-fastDone:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(deadlockGuard):
		t.Fatal("Init of another store waited for the slow store to open")
	}

	close(release)
	wg.Wait()
	for i, err := range slowErrs {
		if err != nil {
			t.Fatalf("Init %d of the slow store: %v", i, err)
		}
	}
	if storeOf(slowCfgs[0]) != storeOf(slowCfgs[1]) {
		t.Fatal("two concurrent Inits of the same store opened two stores")
	}
	if n := slowOpens.Load(); n != 1 {
		t.Fatalf("the slow store was opened %d times, want once", n)
	}
	if n := fastOpens.Load(); n != 1 {
		t.Fatalf("the fast store was opened %d times, want once", n)
	}
}

// A failed Open is not remembered: the next Init tries again.
func TestInitRetriesAFailedOpen(t *testing.T) {
	var calls atomic.Int32
	boom := errors.New("server down")
	name := withOpeners(t, map[string]driver.Opener{"flaky": func(context.Context, *driver.Config) (driver.Backend, error) {
		if calls.Add(1) == 1 {
			return nil, boom
		}
		return newMemBackend(), nil
	}})
	getter := genericclioptions.NewConfigFlags(false)
	if err := Init(new(action.Configuration), getter, "ns", name("flaky"), nil); !errors.Is(err, boom) {
		t.Fatalf("first Init = %v, want the opener's error", err)
	}
	cfg := new(action.Configuration)
	if err := Init(cfg, getter, "ns", name("flaky"), nil); err != nil {
		t.Fatalf("second Init = %v; a failed Open was remembered", err)
	}
	if storeOf(cfg) == nil {
		t.Fatal("no store")
	}
}

// funcGetter and structGetter are RESTClientGetters whose types are not
// comparable: as map keys they would panic.
type funcGetter func() genericclioptions.RESTClientGetter

func (f funcGetter) ToRESTConfig() (*rest.Config, error) { return f().ToRESTConfig() }
func (f funcGetter) ToDiscoveryClient() (discovery.CachedDiscoveryInterface, error) {
	return f().ToDiscoveryClient()
}
func (f funcGetter) ToRESTMapper() (meta.RESTMapper, error) { return f().ToRESTMapper() }
func (f funcGetter) ToRawKubeConfigLoader() clientcmd.ClientConfig {
	return f().ToRawKubeConfigLoader()
}

type structGetter struct {
	genericclioptions.RESTClientGetter
	labels map[string]string
}

// Init takes any getter without panicking. The same func getter is
// recognised again and shares its store; a struct value holding a map
// cannot be, and gets a store of its own each time.
func TestInitNonComparableGetter(t *testing.T) {
	var opens atomic.Int32
	name := withOpeners(t, map[string]driver.Opener{"mem": countingOpener(&opens)})
	flags := genericclioptions.NewConfigFlags(false)
	fg := funcGetter(func() genericclioptions.RESTClientGetter { return flags })
	a, b := new(action.Configuration), new(action.Configuration)
	for _, cfg := range []*action.Configuration{a, b} {
		if err := Init(cfg, fg, "ns", name("mem"), nil); err != nil {
			t.Fatal(err)
		}
	}
	if storeOf(a) != storeOf(b) || opens.Load() != 1 {
		t.Fatalf("two Inits with the same func getter opened %d stores, want 1", opens.Load())
	}

	opens.Store(0)
	sg := structGetter{RESTClientGetter: flags, labels: map[string]string{"a": "b"}}
	for range 2 {
		cfg := new(action.Configuration)
		if err := Init(cfg, sg, "ns", name("mem"), nil); err != nil {
			t.Fatal(err)
		}
		if storeOf(cfg) == nil {
			t.Fatal("no store")
		}
	}
	if n := opens.Load(); n != 2 {
		t.Fatalf("Inits with a struct getter opened %d stores, want one each (2)", n)
	}
}
