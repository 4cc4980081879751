package benchmarks

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"sync/atomic"

	"helm.sh/helm/v3/pkg/action"
	kubefake "helm.sh/helm/v3/pkg/kube/fake"
	"helm.sh/helm/v3/pkg/release"
	"helm.sh/helm/v3/pkg/storage"
	helmdriver "helm.sh/helm/v3/pkg/storage/driver"
	action4 "helm.sh/helm/v4/pkg/action"
	kubefake4 "helm.sh/helm/v4/pkg/kube/fake"
	release4 "helm.sh/helm/v4/pkg/release"
	storage4 "helm.sh/helm/v4/pkg/storage"
	helm4driver "helm.sh/helm/v4/pkg/storage/driver"

	"github.com/helmstore/helmstore/driver"
	"github.com/helmstore/helmstore/helm3"
	"github.com/helmstore/helmstore/helm4"
	"github.com/helmstore/helmstore/internal/testing/readcount"
)

// freshOver returns the function OpenStore sets as Store.fresh: a new store
// through face f over be (opened with cfg), with its part cache off and
// nothing decoded yet, as a new helm process opens the same stored data,
// its backend reads counted. It is never closed: closing it would close be,
// which the store OpenStore opened closes.
func freshOver(be driver.Backend, cfg *driver.Config) func(Face) *lister {
	return func(f Face) *lister {
		c := readcount.New(be)
		l := &lister{reads: c}
		if f == Helm4 {
			nc := helm4.NewConfig(cfg.Name, cfg.ConnectionString, helm4.WithCacheBytes(0))
			nc.RESTClientGetter, nc.Timeout = cfg.RESTClientGetter, cfg.Timeout
			s := helm4.New(c, nc).Namespace("")
			l.list, l.summaries = actionList4(listed4{s, &l.listed}), s.Summaries
			return l
		}
		nc := helm3.NewConfig(cfg.Name, cfg.ConnectionString, helm3.WithCacheBytes(0))
		nc.RESTClientGetter, nc.Timeout = cfg.RESTClientGetter, cfg.Timeout
		s := helm3.New(c, nc).Namespace("")
		l.list, l.summaries = actionList3(listed3{s, &l.listed}), s.Summaries
		return l
	}
}

// A lister is the store one cold listing runs on, through one face.
type lister struct {
	// list runs Helm's action.List over every namespace, as `helm list
	// -A` does, and returns how many releases it listed and the bytes of
	// their manifests.
	list func() (n int, manifestBytes int64, err error)
	// listed is the bytes of the manifests the driver's List returned to
	// the last list (every revision, of which action.List keeps the
	// latest).
	listed atomic.Int64
	// summaries is the store's summary listing of every namespace; nil
	// for Helm's drivers, which have none.
	summaries func(context.Context, driver.SummaryQuery) (driver.SummaryPage, error)
	// reads counts the backend's reads; nil for Helm's drivers.
	reads *readcount.Backend
}

// listerOf returns a new lister of s through face f: a fresh store over
// the same data for a store OpenStore opened, else s's all-namespaces view
// (Helm's drivers, which cache nothing); nil if s has no view through f.
func listerOf(s Store, f Face) *lister {
	if s.fresh != nil {
		return s.fresh(f)
	}
	l := &lister{}
	switch {
	case f == Helm4 && s.View4 != nil:
		l.list = actionList4(listed4{s.View4(""), &l.listed})
	case f == Helm3 && s.View != nil:
		l.list = actionList3(listed3{s.View(""), &l.listed})
	default:
		return nil
	}
	return l
}

// listed3 is a Helm 3 driver whose List records the bytes of the manifests
// it returned.
type listed3 struct {
	helmdriver.Driver
	bytes *atomic.Int64
}

func (d listed3) List(filter func(*release.Release) bool) ([]*release.Release, error) {
	rs, err := d.Driver.List(filter)
	var n int64
	for _, r := range rs {
		n += int64(len(r.Manifest))
	}
	d.bytes.Store(n)
	return rs, err
}

// listed4 is listed3 for a Helm 4 driver.
type listed4 struct {
	helm4driver.Driver
	bytes *atomic.Int64
}

func (d listed4) List(filter func(release4.Releaser) bool) ([]release4.Releaser, error) {
	rs, err := d.Driver.List(filter)
	var n int64
	for _, r := range rs {
		if v1, err := v1Of(r); err == nil {
			n += int64(len(v1.Manifest))
		}
	}
	d.bytes.Store(n)
	return rs, err
}

// actionList3 is Helm 3's action.List over d, as `helm list -A` runs it:
// every namespace, the default state mask (deployed and failed).
func actionList3(d helmdriver.Driver) func() (int, int64, error) {
	return func() (int, int64, error) {
		l := action.NewList(&action.Configuration{Releases: storage.Init(d),
			KubeClient: &kubefake.PrintingKubeClient{Out: io.Discard}, Log: func(string, ...interface{}) {}})
		l.AllNamespaces = true
		l.SetStateMask()
		rs, err := l.Run()
		var m int64
		for _, r := range rs {
			m += int64(len(r.Manifest))
		}
		return len(rs), m, err
	}
}

// actionList4 is Helm 4's action.List over d, as `helm list -A` runs it:
// every namespace, the default state mask (Helm 4's: every status).
func actionList4(d helm4driver.Driver) func() (int, int64, error) {
	return func() (int, int64, error) {
		c := action4.NewConfiguration(action4.ConfigurationSetLogger(slog.DiscardHandler))
		c.Releases = storage4.Init(d)
		c.KubeClient = &kubefake4.PrintingKubeClient{Out: io.Discard, LogOutput: io.Discard}
		l := action4.NewList(c)
		l.AllNamespaces = true
		l.SetStateMask()
		rs, err := l.Run()
		var m int64
		for _, r := range rs {
			v1, err := v1Of(r)
			if err != nil {
				return 0, 0, fmt.Errorf("action.List: %w", err)
			}
			m += int64(len(v1.Manifest))
		}
		return len(rs), m, err
	}
}
