package drivertest

import (
	"context"
	"errors"
	"fmt"

	"helm.sh/helm/v3/pkg/release"
	helmdriver "helm.sh/helm/v3/pkg/storage/driver"
	release4 "helm.sh/helm/v4/pkg/release"
	rspb4 "helm.sh/helm/v4/pkg/release/v1"
	helmdriver4 "helm.sh/helm/v4/pkg/storage/driver"

	"github.com/helmstore/helmstore/helm3"
	"github.com/helmstore/helmstore/helm4"
	"github.com/helmstore/helmstore/internal/engine"
)

// store4 presents a store of the Helm 4 face to the suite's tables, which
// speak Helm 3's types: releases cross between the two by field copy
// (convert4.go), and an error that matches one of Helm 4's sentinels is
// given Helm 3's for the same outcome as well. Only those: an error of the
// Helm 4 face carrying no Helm 4 sentinel (Helm 3's, or package driver's
// alone) reaches the tables without one, and fails them.
type store4 struct {
	s helm4.Store
	// orig is the store of the user's harness this one was put on the
	// Helm 4 face from, for the harness's own hooks (Reopen, Tamper, ...):
	// they are given what they gave.
	orig helm3.Store
}

var (
	_ helm3.Store     = (*store4)(nil)
	_ helm3.Collector = (*store4)(nil)
)

// onHelm4 returns a store of the Helm 4 face over the backend, the
// settings and the namespace of s, a store of the Helm 3 face, in the
// tables' types; ok is false if s is not a helmstore store (engine.Of finds
// no engine under it). Closing the Helm 4 store closes the backend; s is
// left as it is (closing it as well closes the backend again).
func onHelm4(s helm3.Store) (_ helm3.Store, ok bool) {
	hd := engine.Of(s)
	if hd == nil {
		return nil, false
	}
	return &store4{s: helm4.New(hd.Backend(), hd.Config()).Namespace(hd.Scope()), orig: s}, true
}

// origOf returns the store of the user's harness under s, a store the
// suite was given (s itself on the Helm 3 run).
func origOf(s helm3.Store) helm3.Store {
	if s4, ok := s.(*store4); ok {
		return s4.orig
	}
	return s
}

// EngineView returns the engine view under the Helm 4 store, so that
// engine.Of reaches it as it reaches a face's own store.
func (s *store4) EngineView() engine.Handle { return engine.Of(s.s) }

func (s *store4) Name() string { return s.s.Name() }

func (s *store4) Namespace(ns string) helm3.Store {
	return &store4{s: s.s.Namespace(ns), orig: s.orig.Namespace(ns)}
}

func (s *store4) Stats(ctx context.Context) (helm3.Stats, error) {
	st, err := s.s.Stats(ctx)
	return st, err3(err)
}

func (s *store4) Summaries(ctx context.Context, q helm3.SummaryQuery) (helm3.SummaryPage, error) {
	p, err := s.s.Summaries(ctx, q)
	return p, err3(err)
}

func (s *store4) Close() error { return err3(s.s.Close()) }

func (s *store4) Collect(ctx context.Context) error { return err3(helm4.Collect(ctx, s.s)) }

func (s *store4) Get(key string) (*release.Release, error) {
	r, err := s.s.Get(key)
	return fromHelm4(r), err3(err)
}

func (s *store4) List(filter func(*release.Release) bool) ([]*release.Release, error) {
	var f func(release4.Releaser) bool
	if filter != nil {
		f = func(r release4.Releaser) bool { return filter(fromHelm4(r)) }
	}
	rs, err := s.s.List(f)
	return allFromHelm4(rs), err3(err)
}

func (s *store4) Query(labels map[string]string) ([]*release.Release, error) {
	rs, err := s.s.Query(labels)
	return allFromHelm4(rs), err3(err)
}

func (s *store4) Create(key string, r *release.Release) error {
	return err3(s.s.Create(key, releaser4(r)))
}

func (s *store4) Update(key string, r *release.Release) error {
	return err3(s.s.Update(key, releaser4(r)))
}

func (s *store4) Delete(key string) (*release.Release, error) {
	r, err := s.s.Delete(key)
	return fromHelm4(r), err3(err)
}

// releaser4 is r as a Helm 4 caller passes it: nil as nil.
func releaser4(r *release.Release) release4.Releaser {
	if r == nil {
		return nil
	}
	return toHelm4(r)
}

// fromHelm4 returns the Helm 3 release of r, a release a Helm 4 driver
// returned (nil for nil; a Releaser that is not a *v1.Release, which a
// store must never return, as nil too: the tables then fail on it).
func fromHelm4(r release4.Releaser) *release.Release {
	r4, _ := r.(*rspb4.Release)
	return toHelm3(r4)
}

func allFromHelm4(rs []release4.Releaser) []*release.Release {
	if rs == nil {
		return nil
	}
	out := make([]*release.Release, len(rs))
	for i, r := range rs {
		out[i] = fromHelm4(r)
	}
	return out
}

// sentinels3 pairs Helm 4's sentinels with Helm 3's.
var sentinels3 = [...]struct{ helm4, helm3 error }{
	{helmdriver4.ErrReleaseNotFound, helmdriver.ErrReleaseNotFound},
	{helmdriver4.ErrReleaseExists, helmdriver.ErrReleaseExists},
	{helmdriver4.ErrInvalidKey, helmdriver.ErrInvalidKey},
}

// err3 returns err, an error of the Helm 4 face, as the tables check it: a
// bare Helm 4 sentinel (Query's "no release matches") as Helm 3's bare
// value; an error wrapping one as that error also matching Helm 3's, with
// the same text; an error matching one of Helm 3's sentinels, which no
// Helm 4 driver returns, as an error saying so that matches none; any other
// error as it is.
func err3(err error) error {
	if err == nil {
		return nil
	}
	for _, p := range sentinels3 {
		if errors.Is(err, p.helm3) {
			return fmt.Errorf("the Helm 4 face returned Helm 3's sentinel %q: %v", p.helm3, err)
		}
	}
	for _, p := range sentinels3 {
		if err == p.helm4 {
			return p.helm3
		}
	}
	for _, p := range sentinels3 {
		if errors.Is(err, p.helm4) {
			return &helm3Error{err: err, helm3: p.helm3}
		}
	}
	return err
}

// helm3Error is an error of the Helm 4 face that matches a Helm 4
// sentinel, given Helm 3's for the same outcome: its text is its own, and
// errors.Is and errors.As see everything it wraps.
type helm3Error struct{ err, helm3 error }

func (e *helm3Error) Error() string   { return e.err.Error() }
func (e *helm3Error) Unwrap() []error { return []error{e.err, e.helm3} }
