package drivertest

import (
	"fmt"
	"io"
	"log/slog"
	"sort"
	"testing"

	"helm.sh/helm/v3/pkg/chart"
	helmdriver "helm.sh/helm/v3/pkg/storage/driver"
	"helm.sh/helm/v4/pkg/action"
	common4 "helm.sh/helm/v4/pkg/chart/common"
	kubefake "helm.sh/helm/v4/pkg/kube/fake"
	release4 "helm.sh/helm/v4/pkg/release"
	rspb4 "helm.sh/helm/v4/pkg/release/v1"
	"helm.sh/helm/v4/pkg/storage"
	helmdriver4 "helm.sh/helm/v4/pkg/storage/driver"
)

// actions4 runs the action flows' steps through Helm 4's action package
// over d, a Helm 4 driver.
type actions4 struct{ d helmdriver4.Driver }

// flowActions4 returns the Helm 4 actions over d, a store of the Helm 4 run
// (a store4) or a memView over Helm 4's Memory driver.
func flowActions4(d helmdriver.Driver) flowActions {
	switch d := d.(type) {
	case *store4:
		return actions4{d.s}
	case memView:
		if m, ok := d.m.(*memory4); ok {
			return actions4{memView4{v: d, m: m.driver()}}
		}
	}
	panic(fmt.Sprintf("drivertest: no Helm 4 driver under %T", d))
}

// config is a Helm 4 action configuration over the driver with a fake
// Kubernetes client, as Helm's own action tests use.
func (a actions4) config() *action.Configuration {
	c := action.NewConfiguration(action.ConfigurationSetLogger(slog.DiscardHandler))
	c.Releases = storage.Init(a.d)
	c.KubeClient = &kubefake.PrintingKubeClient{Out: io.Discard, LogOutput: io.Discard}
	c.Capabilities = common4.DefaultCapabilities
	return c
}

func (a actions4) install(name, ns string, ch *chart.Chart, vals map[string]interface{}) error {
	i := action.NewInstall(a.config())
	i.ReleaseName, i.Namespace = name, ns
	_, err := i.Run(chartTo4(ch), vals)
	return err
}

func (a actions4) upgrade(name, ns string, ch *chart.Chart, vals map[string]interface{}, maxHistory int) error {
	u := action.NewUpgrade(a.config())
	u.Namespace, u.MaxHistory = ns, maxHistory
	_, err := u.Run(name, chartTo4(ch), vals)
	return err
}

func (a actions4) rollback(name string, version, maxHistory int) error {
	r := action.NewRollback(a.config())
	r.Version, r.MaxHistory = version, maxHistory
	return r.Run(name)
}

func (a actions4) uninstall(name string, keepHistory bool) error {
	u := action.NewUninstall(a.config())
	u.KeepHistory = keepHistory
	_, err := u.Run(name)
	return err
}

func (a actions4) listAll() ([]string, error) {
	l := action.NewList(a.config())
	l.AllNamespaces, l.StateMask = true, action.ListAll
	rs, err := l.Run()
	var out []string
	for _, r := range rs {
		r4, ok := r.(*rspb4.Release)
		if !ok {
			return nil, fmt.Errorf("list returned a %T; want a *v1.Release", r)
		}
		out = append(out, fmt.Sprintf("%s/%s v%d %s", r4.Namespace, r4.Name, r4.Version, r4.Info.Status))
	}
	return out, err
}

func (a actions4) history(name string) (int, error) {
	rs, err := action.NewHistory(a.config()).Run(name)
	return len(rs), err
}

// stored renders each release as flowLine does its Helm 3 release, with
// what only Helm 4's release holds and Helm 4's actions set (how it was
// applied, the revision a rollback went back to) after it.
func (a actions4) stored(t *testing.T) []string {
	t.Helper()
	rs, err := a.d.List(func(release4.Releaser) bool { return true })
	if err != nil {
		t.Fatalf("%s: list all: %v", a.d.Name(), err)
	}
	var out []string
	for _, r := range rs {
		r4, ok := r.(*rspb4.Release)
		if !ok {
			t.Fatalf("%s: list all returned a %T; want a *v1.Release", a.d.Name(), r)
		}
		rollback := 0
		if r4.Info != nil {
			rollback = r4.Info.RollbackRevision
		}
		out = append(out, fmt.Sprintf("%s applyMethod=%q rollbackRevision=%d", flowLine(t, toHelm3(r4)), r4.ApplyMethod, rollback))
	}
	sort.Strings(out)
	return out
}

// memView4 is a memView over Helm 4's Memory driver as Helm 4's action
// package takes it. Like memView, it gives Memory private copies of what it
// stores and hands out copies of what it holds (clone4), so that an action
// changing a release it read or wrote changes nothing Memory holds.
type memView4 struct {
	v memView
	m *helmdriver4.Memory
}

// clone4 is clone for Helm 4's releases.
func clone4(r release4.Releaser) release4.Releaser {
	var c rspb4.Release
	switch r := r.(type) {
	case *rspb4.Release:
		if r == nil {
			return r
		}
		c = *r
	case rspb4.Release:
		c = r
	default:
		return r // Memory refuses it
	}
	if c.Info != nil {
		info := *c.Info
		c.Info = &info
	}
	if c.Labels != nil {
		labels := make(map[string]string, len(c.Labels))
		for k, v := range c.Labels {
			labels[k] = v
		}
		c.Labels = labels
	}
	return &c
}

func clones4(rs []release4.Releaser) []release4.Releaser {
	for i := range rs {
		rs[i] = clone4(rs[i])
	}
	return rs
}

func (d memView4) Name() string { return d.m.Name() }

func (d memView4) Get(key string) (release4.Releaser, error) {
	defer d.v.lock()()
	r, err := d.m.Get(key)
	return clone4(r), err
}

func (d memView4) List(filter func(release4.Releaser) bool) ([]release4.Releaser, error) {
	defer d.v.lock()()
	rs, err := d.m.List(filter)
	return clones4(rs), err
}

func (d memView4) Query(labels map[string]string) ([]release4.Releaser, error) {
	defer d.v.lock()()
	rs, err := d.m.Query(labels)
	return clones4(rs), err
}

func (d memView4) Create(key string, r release4.Releaser) error {
	defer d.v.lock()()
	return d.m.Create(key, clone4(r))
}

func (d memView4) Update(key string, r release4.Releaser) error {
	defer d.v.lock()()
	return d.m.Update(key, clone4(r))
}

func (d memView4) Delete(key string) (release4.Releaser, error) {
	defer d.v.lock()()
	r, err := d.m.Delete(key)
	return clone4(r), err
}

var _ helmdriver4.Driver = memView4{}
