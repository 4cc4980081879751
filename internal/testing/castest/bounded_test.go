package castest

import (
	"errors"
	"testing"
	"time"

	"helm.sh/helm/v3/pkg/release"

	"github.com/helmstore/helmstore/cas"
	"github.com/helmstore/helmstore/driver"
	"github.com/helmstore/helmstore/helm3"
)

// boundedProtocol chunks the chart and the head body of rel's releases.
var boundedProtocol = cas.Config{InlinePartBytes: 256, InlineBodyBytes: 256, ChunkBytes: 512,
	Retry: cas.Retry{First: time.Millisecond, Max: 20 * time.Millisecond}}

// TestRecordedCountsBounded: a chunked part or head body whose record
// claims far more chunks, or bytes, than were written makes a fresh
// store's Get ErrCorrupt (never more allocated than a few chunks' worth,
// within the operation's deadline), and the release stays deletable,
// also bounded. Before reads were bounded, a count of 2^30 made Get
// allocate names for every chunk it claimed and read them one by one.
// (Not parallel: it measures what the whole process allocates.)
func TestRecordedCountsBounded(t *testing.T) {
	for _, tc := range []struct {
		name string
		edit func(data *Store, head, chart cas.Ref) error
	}{
		{"part-chunks", func(data *Store, _, chart cas.Ref) error {
			return data.Edit(chart, func(o *cas.Object) { o.Part.Chunks = HugeCount })
		}},
		{"part-chunks-and-size", func(data *Store, _, chart cas.Ref) error {
			return data.Edit(chart, func(o *cas.Object) { o.Part.Chunks, o.Part.StoredSize = HugeCount, HugeSize })
		}},
		{"part-size", func(data *Store, _, chart cas.Ref) error {
			return data.Edit(chart, func(o *cas.Object) { o.Part.StoredSize = HugeSize })
		}},
		{"part-plausible-count", func(data *Store, _, chart cas.Ref) error {
			// As many chunks as the size would allow: reading stops at the
			// first missing one.
			return data.Edit(chart, func(o *cas.Object) { o.Part.StoredSize = 200 << 20; o.Part.Chunks = 400 << 10 })
		}},
		{"body-chunks", func(data *Store, head, _ cas.Ref) error {
			return data.Edit(head, func(o *cas.Object) { o.Head.BodyChunks.Count = HugeCount })
		}},
		{"body-size", func(data *Store, head, _ cas.Ref) error {
			return data.Edit(head, func(o *cas.Object) { o.Head.BodyChunks.Size = HugeSize })
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			data := New(nil)
			cfg := &driver.Config{Name: "castest", Timeout: 5 * time.Second, Log: func(string, ...interface{}) {}}
			w := helm3.New(cas.New(data.Process(nil), boundedProtocol), cfg).Namespace(Namespace)
			defer w.Close()
			k := key("app", 1)
			r := rel("app", 1, "shared", 1, release.StatusDeployed)
			if err := w.Create(k, r); err != nil {
				t.Fatal(err)
			}
			other := rel("web", 1, "other", 2, release.StatusDeployed)
			if err := w.Create(key("web", 1), other); err != nil {
				t.Fatal(err)
			}
			w.Close()
			head := cas.Ref{Kind: cas.KindHead, Namespace: Namespace, Name: k}
			var chart cas.Ref
			for _, o := range data.Objects(cas.KindHead) {
				if o.Name != k {
					continue
				}
				if o.Head.BodyChunks == nil {
					t.Fatal("the head body is not chunked: the test tests nothing")
				}
				chart = cas.Ref{Kind: cas.KindChart, Namespace: Namespace, Name: o.Head.Parts.Chart}
			}
			for _, o := range data.Objects(cas.KindChart) {
				if o.Ref() == chart && o.Part.Chunks < 2 {
					t.Fatalf("the chart is in %d chunks: the test tests nothing", o.Part.Chunks)
				}
			}
			if err := tc.edit(data, head, chart); err != nil {
				t.Fatal(err)
			}
			s := helm3.New(cas.New(data.Process(nil), boundedProtocol), cfg).Namespace(Namespace)
			defer s.Close()
			bound := func(what string, fn func() error) error {
				t.Helper()
				return Bounded(t, what, cfg.Timeout, 64<<20, fn)
			}
			if err := bound("get", func() error { _, err := s.Get(k); return err }); !errors.Is(err, helm3.ErrCorrupt) {
				t.Errorf("get: %v, want ErrCorrupt", err)
			}
			if err := bound("get of the other release", func() error { _, err := s.Get(key("web", 1)); return err }); err != nil {
				t.Errorf("get of a release the damage does not touch: %v", err)
			}
			if err := bound("list", func() error { _, err := s.List(func(*release.Release) bool { return true }); return err }); err != nil {
				t.Errorf("list: %v", err)
			}
			if err := bound("delete", func() error { _, err := s.Delete(k); return err }); err != nil && !errors.Is(err, helm3.ErrCorrupt) {
				t.Errorf("delete: %v", err)
			}
			if _, err := s.Get(k); !errors.Is(err, helm3.ErrReleaseNotFound) {
				t.Errorf("get after delete: %v, want not found", err)
			}
		})
	}
}
