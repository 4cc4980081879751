package benchmarks

import (
	"fmt"

	"helm.sh/helm/v3/pkg/release"
	"helm.sh/helm/v3/pkg/storage"
	helmdriver "helm.sh/helm/v3/pkg/storage/driver"
	release4 "helm.sh/helm/v4/pkg/release"
	rcommon "helm.sh/helm/v4/pkg/release/common"
	rspb "helm.sh/helm/v4/pkg/release/v1"
	storage4 "helm.sh/helm/v4/pkg/storage"
	helm4driver "helm.sh/helm/v4/pkg/storage/driver"

	"github.com/helmstore/helmstore/internal/testing/fixture/fixture4"
)

// client is one run's store through one face, in one namespace, over the
// revisions it was made with, held in the face's own types (converted
// before the timer starts): the benchmarks name a revision by its index.
// Its views are resolved once per namespace, outside the timer.
type client interface {
	// setStatus sets the status of revision i.
	setStatus(i int, st release.Status)
	// create stores revision i, update stores it again, as the key its
	// name and version make.
	create(i int) error
	update(i int) error
	// createIn is create in namespace ns.
	createIn(ns string, i int) error
	// get reads key, which must have a chart.
	get(key string) error
	// history and deployed are Helm's storage's (revisions of name, the
	// version of the deployed one); list lists every release.
	history(name string) (int, error)
	deployed(name string) (int, error)
	list() (int, error)
}

// newClient returns s's client through face f in namespace ns over rs.
func newClient(f Face, s Store, ns string, rs []*release.Release) client {
	if f == Helm4 {
		c := &client4{view: s.View4, views: map[string]helm4driver.Driver{}, rs: fixture4.Helm4Releases(rs)}
		c.d = c.in(ns)
		return c
	}
	c := &client3{view: s.View, views: map[string]helmdriver.Driver{}, rs: rs}
	c.d = c.in(ns)
	return c
}

// client3 is a client through Helm 3's driver interface.
type client3 struct {
	view  func(string) helmdriver.Driver
	views map[string]helmdriver.Driver
	d     helmdriver.Driver // views[ns]
	rs    []*release.Release
}

func (c *client3) in(ns string) helmdriver.Driver {
	d, ok := c.views[ns]
	if !ok {
		d = c.view(ns)
		c.views[ns] = d
	}
	return d
}

func (c *client3) setStatus(i int, st release.Status) { c.rs[i].Info.Status = st }
func (c *client3) create(i int) error {
	return c.d.Create(benchKey(c.rs[i].Name, c.rs[i].Version), c.rs[i])
}
func (c *client3) update(i int) error {
	return c.d.Update(benchKey(c.rs[i].Name, c.rs[i].Version), c.rs[i])
}
func (c *client3) createIn(ns string, i int) error {
	return c.in(ns).Create(benchKey(c.rs[i].Name, c.rs[i].Version), c.rs[i])
}
func (c *client3) get(key string) error {
	r, err := c.d.Get(key)
	if err == nil && r.Chart == nil {
		err = fmt.Errorf("get %s: no chart", key)
	}
	return err
}
func (c *client3) history(name string) (int, error) {
	rs, err := storage.Init(c.d).History(name)
	return len(rs), err
}
func (c *client3) deployed(name string) (int, error) {
	r, err := storage.Init(c.d).Deployed(name)
	if err != nil {
		return 0, err
	}
	return r.Version, nil
}
func (c *client3) list() (int, error) {
	rs, err := c.d.List(func(*release.Release) bool { return true })
	return len(rs), err
}

// client4 is a client through Helm 4's driver interface, on v1 releases.
type client4 struct {
	view  func(string) helm4driver.Driver
	views map[string]helm4driver.Driver
	d     helm4driver.Driver // views[ns]
	rs    []*rspb.Release
}

func (c *client4) in(ns string) helm4driver.Driver {
	d, ok := c.views[ns]
	if !ok {
		d = c.view(ns)
		c.views[ns] = d
	}
	return d
}

func (c *client4) setStatus(i int, st release.Status) { c.rs[i].Info.Status = rcommon.Status(st) }
func (c *client4) create(i int) error {
	return c.d.Create(benchKey(c.rs[i].Name, c.rs[i].Version), c.rs[i])
}
func (c *client4) update(i int) error {
	return c.d.Update(benchKey(c.rs[i].Name, c.rs[i].Version), c.rs[i])
}
func (c *client4) createIn(ns string, i int) error {
	return c.in(ns).Create(benchKey(c.rs[i].Name, c.rs[i].Version), c.rs[i])
}
func (c *client4) get(key string) error {
	r, err := c.d.Get(key)
	if err != nil {
		return err
	}
	if v1, err := v1Of(r); err != nil || v1.Chart == nil {
		return fmt.Errorf("get %s: no chart (%v)", key, err)
	}
	return nil
}
func (c *client4) history(name string) (int, error) {
	rs, err := storage4.Init(c.d).History(name)
	return len(rs), err
}
func (c *client4) deployed(name string) (int, error) {
	r, err := storage4.Init(c.d).Deployed(name)
	if err != nil {
		return 0, err
	}
	v1, err := v1Of(r)
	if err != nil {
		return 0, err
	}
	return v1.Version, nil
}
func (c *client4) list() (int, error) {
	rs, err := c.d.List(func(release4.Releaser) bool { return true })
	return len(rs), err
}

// v1Of is the v1 release r holds, as Helm 4's drivers return it.
func v1Of(r release4.Releaser) (*rspb.Release, error) {
	switch r := r.(type) {
	case *rspb.Release:
		return r, nil
	case rspb.Release:
		return &r, nil
	}
	return nil, fmt.Errorf("a %T, not a v1 release", r)
}
