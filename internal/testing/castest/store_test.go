package castest

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/helmstore/helmstore/driver"

	"github.com/helmstore/helmstore/cas"
	"github.com/helmstore/helmstore/internal/caswire"
)

func chartObj(name string, data string) *cas.Object {
	return &cas.Object{Kind: cas.KindChart, Namespace: "ns", Name: name, Labels: map[string]string{"a": "1"},
		Part: &cas.PartRecord{Digest: name, Complete: true, Data: []byte(data)}}
}

func wantIs(t *testing.T, what string, err, target error) {
	t.Helper()
	if !errors.Is(err, target) {
		t.Fatalf("%s: %v, want %v", what, err, target)
	}
}

// TestContract checks each call against the cas.ObjectStore contract.
func TestContract(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := New(nil)
	in := chartObj("c1", "hello")
	a, err := s.Create(ctx, in)
	if err != nil {
		t.Fatal(err)
	}
	if a.UID == "" || a.Version == "" || a.Created.IsZero() || a.Part != nil {
		t.Fatalf("created: %+v (want UID, Version, Created, no record)", a)
	}
	in.Part.Data[0] = 'X' // the store keeps its own copy
	_, err = s.Create(ctx, chartObj("c1", "other"))
	wantIs(t, "second create", err, cas.ErrExists)
	got, err := s.Get(ctx, a.Ref(), cas.ReadOptions{})
	if err != nil || string(got.Part.Data) != "hello" || got.Version != a.Version || got.UID != a.UID {
		t.Fatalf("get: %+v, %v", got, err)
	}
	got.Part.Data[0] = 'Y' // and hands out copies
	if m, _ := s.Get(ctx, a.Ref(), cas.ReadOptions{Meta: true}); m.Part != nil || m.Version != a.Version {
		t.Fatalf("meta get: %+v", m)
	}
	_, err = s.Get(ctx, cas.Ref{Kind: cas.KindValues, Namespace: "ns", Name: "c1"}, cas.ReadOptions{})
	wantIs(t, "get of another kind", err, cas.ErrNotFound)

	upd := chartObj("c1", "v2")
	upd.Version = "stale"
	_, err = s.Replace(ctx, upd)
	wantIs(t, "replace at a wrong version", err, cas.ErrVersionMismatch)
	upd.Version = a.Version
	b, err := s.Replace(ctx, upd)
	if err != nil || b.Version == a.Version || b.UID != a.UID || !b.Created.Equal(a.Created) {
		t.Fatalf("replace: %+v, %v", b, err)
	}
	_, err = s.Replace(ctx, upd)
	wantIs(t, "replace at the replaced version", err, cas.ErrVersionMismatch)

	r, err := s.AddReferrer(ctx, a.Ref(), cas.Referrer{Kind: cas.KindHead, Name: "h", UID: "u1"})
	if err != nil || len(r.Referrers) != 1 || r.Version == b.Version || string(r.Part.Data) != "v2" {
		t.Fatalf("add referrer: %+v, %v", r, err)
	}
	if r2, _ := s.AddReferrer(ctx, a.Ref(), cas.Referrer{Kind: cas.KindHead, Name: "h", UID: "u1"}); len(r2.Referrers) != 1 {
		t.Fatalf("the same referrer twice: %+v", r2.Referrers)
	}
	if _, ok := s.WithoutReferrerAdder().(cas.ReferrerAdder); ok {
		t.Fatal("WithoutReferrerAdder still adds referrers")
	}

	wantIs(t, "delete at a wrong version", s.Delete(ctx, a.Ref(), b.Version), cas.ErrVersionMismatch)
	if err := s.Delete(ctx, a.Ref(), ""); err != nil {
		t.Fatal(err)
	}
	wantIs(t, "delete again", s.Delete(ctx, a.Ref(), ""), cas.ErrNotFound)
	_, err = s.Replace(ctx, upd)
	wantIs(t, "replace after delete", err, cas.ErrNotFound)
	c, err := s.Create(ctx, chartObj("c1", "again"))
	if err != nil || c.UID == a.UID || c.Version == a.Version || c.Version == b.Version {
		t.Fatalf("created again: %+v, %v (versions and UIDs are never reused)", c, err)
	}

	// List by kind, namespace, labels and label presence.
	if _, err := s.Create(ctx, &cas.Object{Kind: cas.KindHead, Namespace: "ns", Name: "h1", Labels: map[string]string{"name": "x", caswire.LabelPending: "parts"}, Head: &cas.HeadRecord{HeadFields: cas.HeadFields{Key: "k"}}}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Create(ctx, &cas.Object{Kind: cas.KindHead, Namespace: "other", Name: "h1", Labels: map[string]string{"name": "x"}, Head: &cas.HeadRecord{HeadFields: cas.HeadFields{Key: "k"}}}); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		sel  cas.Selector
		want int
	}{
		{cas.Selector{Kind: cas.KindHead}, 2},
		{cas.Selector{Kind: cas.KindHead, Namespace: "ns"}, 1},
		{cas.Selector{Kind: cas.KindHead, Labels: map[string]string{"name": "x"}}, 2},
		{cas.Selector{Kind: cas.KindHead, Has: []string{caswire.LabelPending}}, 1},
		{cas.Selector{Kind: cas.KindHead, Name: "h2"}, 0},
		{cas.Selector{Kind: cas.KindChart}, 1},
	} {
		if got, err := s.List(ctx, c.sel); err != nil || len(got) != c.want {
			t.Errorf("list %+v: %d objects, %v; want %d", c.sel, len(got), err, c.want)
		}
	}
	if _, err := s.Create(ctx, &cas.Object{Kind: cas.KindHead, Namespace: "ns", Name: "bad", Part: &cas.PartRecord{}}); err == nil || errors.Is(err, cas.ErrExists) {
		t.Fatalf("a head object holding a part record: %v", err)
	}
}

// TestFaults checks what each fault does to the call and to the data.
func TestFaults(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := New(nil)
	// Write 0 fails, write 1 loses its answer, write 2 crashes after
	// being applied.
	p := s.Process(Plans(At(0, Fail), At(1, LoseAnswer), At(2, CrashAfter)))
	_, err := p.Create(ctx, chartObj("a", "x"))
	wantIs(t, "failed create", err, ErrUnavailable)
	if s.Len() != 0 {
		t.Fatal("a failed write was applied")
	}
	_, err = p.Create(ctx, chartObj("a", "x"))
	wantIs(t, "create whose answer is lost", err, ErrAnswerLost)
	if errors.Is(err, cas.ErrNotFound) || errors.Is(err, cas.ErrExists) || s.Len() != 1 {
		t.Fatalf("lost answer: %v, %d objects (want applied, and no outcome sentinel)", err, s.Len())
	}
	_, err = p.Create(ctx, chartObj("b", "y"))
	wantIs(t, "create then crash", err, ErrCrashed)
	if s.Len() != 2 || !p.Dead() {
		t.Fatalf("crash after: %d objects, dead %v", s.Len(), p.Dead())
	}
	_, err = p.Get(ctx, cas.Ref{Kind: cas.KindChart, Namespace: "ns", Name: "a"}, cas.ReadOptions{})
	wantIs(t, "read of a dead process", err, ErrCrashed)
	if p.Writes() != 3 {
		t.Fatalf("writes: %d", p.Writes())
	}
	// Another process is alive, and sees what the dead one wrote.
	q := p.Process(CrashAt(1))
	if _, err := q.Get(ctx, cas.Ref{Kind: cas.KindChart, Namespace: "ns", Name: "b"}, cas.ReadOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := q.Delete(ctx, cas.Ref{Kind: cas.KindChart, Namespace: "ns", Name: "b"}, ""); err != nil {
		t.Fatal(err)
	}
	err = q.Delete(ctx, cas.Ref{Kind: cas.KindChart, Namespace: "ns", Name: "a"}, "")
	wantIs(t, "crash before write 1", err, ErrCrashed)
	if s.Len() != 1 {
		t.Fatalf("crash before: %d objects", s.Len())
	}
	if len(q.Trace()) != 3 {
		t.Fatalf("trace: %q", q.Trace())
	}

	// A stale read answers with the version before the last write.
	r := s.Process(func(op Op) Fault { return Stale })
	ref := cas.Ref{Kind: cas.KindChart, Namespace: "ns", Name: "a"}
	_, err = r.Get(ctx, ref, cas.ReadOptions{Stale: true})
	wantIs(t, "stale read of an object written once", err, cas.ErrNotFound)
	cur, _ := s.Get(ctx, ref, cas.ReadOptions{})
	upd := chartObj("a", "new")
	upd.Version = cur.Version
	if _, err := s.Replace(ctx, upd); err != nil {
		t.Fatal(err)
	}
	if got, err := r.Get(ctx, ref, cas.ReadOptions{Stale: true}); err != nil || string(got.Part.Data) != "x" {
		t.Fatalf("stale read: %+v, %v", got, err)
	}
	if got, err := r.Get(ctx, ref, cas.ReadOptions{}); err != nil || string(got.Part.Data) != "new" {
		t.Fatalf("a read that does not allow stale answers: %+v, %v", got, err)
	}

	// Garble, Age.
	if err := s.Garble(ref); err != nil {
		t.Fatal(err)
	}
	if got, err := s.Get(ctx, ref, cas.ReadOptions{}); err != nil || !errors.Is(got.Err, driver.ErrCorrupt) || got.Part != nil {
		t.Fatalf("garbled: %+v, %v", got, err)
	}
	before, _ := s.Get(ctx, ref, cas.ReadOptions{})
	s.Age(time.Hour)
	after, _ := s.Get(ctx, ref, cas.ReadOptions{})
	if d := before.Created.Sub(after.Created); d != time.Hour {
		t.Fatalf("aged by %v", d)
	}
}

// TestRandomIsDeterministic: the same seed injects the same faults at the
// same call numbers, and the rates are roughly kept.
func TestRandomIsDeterministic(t *testing.T) {
	t.Parallel()
	rates := Rates{Fail: 0.1, LoseAnswer: 0.1, CrashAfter: 0.05, ReadFail: 0.1}
	a, b := Random(7, rates), Random(7, rates)
	c := Random(8, rates)
	same, faults := true, 0
	for i := 0; i < 2000; i++ {
		op := Op{Call: CallReplace, Seq: i, Write: i}
		fa := a(op)
		if fa != b(op) {
			t.Fatalf("call %d: %v and %v", i, fa, b(op))
		}
		if fa != c(op) {
			same = false
		}
		if fa != None {
			faults++
		}
	}
	if same {
		t.Fatal("seeds 7 and 8 inject the same faults")
	}
	if faults < 350 || faults > 650 {
		t.Fatalf("%d faults in 2000 writes at a rate of 0.25", faults)
	}
}
