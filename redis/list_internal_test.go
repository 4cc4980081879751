package redis

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"slices"
	"strings"
	"sync"
	"testing"

	goredis "github.com/redis/go-redis/v9"
	"helm.sh/helm/v3/pkg/chart"
	"helm.sh/helm/v3/pkg/release"
	helmtime "helm.sh/helm/v3/pkg/time"

	"github.com/helmstore/helmstore/driver"
	"github.com/helmstore/helmstore/helm3"
	"github.com/helmstore/helmstore/internal/testing/testenv"
	"github.com/helmstore/helmstore/internal/testing/testenv/redisenv"
)

// listStore opens a store on the standalone server under a fresh prefix.
func listStore(t *testing.T) (helm3.Store, *redisBackend) {
	t.Helper()
	u, err := url.Parse(redisenv.URL(t))
	if err != nil {
		t.Fatal(err)
	}
	q := u.Query()
	q.Set("key_prefix", testenv.UniqueName("helmstore-list-"))
	u.RawQuery = q.Encode()
	s, err := helm3.Open(context.Background(), Name, u.String())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s, backendOf(t, s)
}

// listRelease is revision v of a small release with its own chart and
// custom labels.
func listRelease(ns, name string, v int, st release.Status, labels map[string]string) *release.Release {
	t := helmtime.Unix(1700000000+int64(v), 0).UTC()
	return &release.Release{Name: name, Namespace: ns, Version: v, Labels: labels,
		Chart: &chart.Chart{Metadata: &chart.Metadata{Name: "chart-" + name, Version: fmt.Sprintf("1.%d.0", v), AppVersion: "9", APIVersion: chart.APIVersionV2},
			Templates: []*chart.File{{Name: "templates/cm.yaml", Data: []byte("kind: ConfigMap\n")}}},
		Config:   map[string]interface{}{"v": float64(v)},
		Manifest: fmt.Sprintf("kind: ConfigMap\nmetadata:\n  name: %s-%d\n", name, v),
		Info:     &release.Info{FirstDeployed: t, LastDeployed: t, Status: st, Description: fmt.Sprintf("%s %d", name, v)}}
}

// seedList writes a (v1 superseded, v2 deployed), b (v1 failed, with a
// label) and c (v1 deployed) in namespaces list-x and list-y.
func seedList(t *testing.T, s helm3.Store) {
	t.Helper()
	for _, ns := range []string{"list-x", "list-y"} {
		for _, r := range []*release.Release{
			listRelease(ns, "a", 1, release.StatusSuperseded, nil),
			listRelease(ns, "a", 2, release.StatusDeployed, nil),
			listRelease(ns, "b", 1, release.StatusFailed, map[string]string{"team": "t"}),
			listRelease(ns, "c", 1, release.StatusDeployed, nil),
		} {
			if err := s.Namespace(ns).Create(driver.MakeKey(r.Name, r.Version), r); err != nil {
				t.Fatal(err)
			}
		}
	}
}

// commandLog records the commands a client sends.
type commandLog struct {
	mu   sync.Mutex
	cmds [][]interface{}
}

func (l *commandLog) DialHook(next goredis.DialHook) goredis.DialHook { return next }

func (l *commandLog) ProcessHook(next goredis.ProcessHook) goredis.ProcessHook {
	return func(ctx context.Context, cmd goredis.Cmder) error {
		l.add(cmd)
		return next(ctx, cmd)
	}
}

func (l *commandLog) ProcessPipelineHook(next goredis.ProcessPipelineHook) goredis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []goredis.Cmder) error {
		for _, c := range cmds {
			l.add(c)
		}
		return next(ctx, cmds)
	}
}

func (l *commandLog) add(c goredis.Cmder) {
	l.mu.Lock()
	l.cmds = append(l.cmds, c.Args())
	l.mu.Unlock()
}

func (l *commandLog) take() [][]interface{} {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := l.cmds
	l.cmds = nil
	return out
}

// A summary listing reads no body, digest or part: its only commands on a
// head are HMGET of the index and summary fields and HLEN, and every
// listing returns the summaries of the releases written.
func TestListReadsOnlyIndexAndSummary(t *testing.T) {
	s, b := listStore(t)
	seedList(t, s)
	var log commandLog
	b.c.AddHook(&log)
	ctx := context.Background()
	for _, c := range []struct {
		q    helm3.SummaryQuery
		want int
	}{
		{helm3.SummaryQuery{}, 6},
		{helm3.SummaryQuery{AllRevisions: true}, 8},
		{helm3.SummaryQuery{Statuses: []string{"deployed"}}, 4},
		{helm3.SummaryQuery{AllRevisions: true, Statuses: []string{"superseded", "failed"}}, 4},
		{helm3.SummaryQuery{Labels: map[string]string{"team": "t"}}, 2},
		{helm3.SummaryQuery{AllRevisions: true, Labels: map[string]string{"team": "t"}, Statuses: []string{"failed"}}, 2},
		{helm3.SummaryQuery{NamePrefix: "a", Limit: 1}, 1},
	} {
		p, err := s.Namespace("").Summaries(ctx, c.q)
		if err != nil || len(p.Summaries) != c.want {
			t.Fatalf("Summaries(%+v) = %d entries, %v; want %d", c.q, len(p.Summaries), err, c.want)
		}
		for _, sm := range p.Summaries {
			want := listRelease(sm.Namespace, sm.Name, sm.Revision, release.StatusUnknown, nil)
			if sm.Chart != want.Chart.Metadata.Name || sm.ChartVersion != want.Chart.Metadata.Version ||
				sm.Description != want.Info.Description || !sm.Updated.Equal(want.Info.LastDeployed.Time) {
				t.Fatalf("Summaries(%+v): %+v is not the summary written", c.q, sm)
			}
		}
		for _, args := range log.take() {
			name := strings.ToLower(fmt.Sprint(args[0]))
			switch name {
			case "hgetall", "hget", "hvals", "hscan", "get", "evalsha", "eval":
				t.Fatalf("Summaries(%+v) sent %v", c.q, args)
			case "hmget":
				for _, f := range args[2:] {
					if !slices.Contains(listFields, fmt.Sprint(f)) {
						t.Fatalf("Summaries(%+v) read field %v: %v", c.q, f, args)
					}
				}
			}
		}
	}
}

// A head written before the backend kept summaries (no marker) is listed
// without one, not as damage; the engine reads it whole, so the listing is
// the same. Updating it stores the summary.
func TestListHeadsWithoutSummary(t *testing.T) {
	s, b := listStore(t)
	seedList(t, s)
	ctx := context.Background()
	q := helm3.SummaryQuery{AllRevisions: true}
	before, err := s.Namespace("").Summaries(ctx, q)
	if err != nil {
		t.Fatal(err)
	}
	key := driver.MakeKey("a", 1)
	for i, ns := range []string{"list-x", "list-y"} {
		// In list-x, a head packed without the summary; in list-y, one
		// whose fields are unpacked (written before the index was).
		err := editIndex(ctx, b, b.k.head(ns, key), func(m map[string]string) { delete(m, fChartName) })
		if i == 1 {
			err = errors.Join(err, unpackHead(ctx, b, b.k.head(ns, key)),
				b.c.HDel(ctx, b.k.head(ns, key), fSummary, fChartVersion, fAppVersion, fUpdated, fDescription).Err())
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	hs, err := b.List(ctx, driver.ListQuery{})
	if err != nil || len(hs) != 8 {
		t.Fatalf("List = %d heads, %v; want 8", len(hs), err)
	}
	for _, h := range hs {
		if h.Err != nil || h.HasSummary != (h.Key != key) {
			t.Fatalf("List: %s/%s: HasSummary %v, Err %v", h.Namespace, h.Key, h.HasSummary, h.Err)
		}
	}
	after, err := s.Namespace("").Summaries(ctx, q)
	if err != nil || fmt.Sprint(after) != fmt.Sprint(before) {
		t.Fatalf("Summaries of heads without summary:\n%v, %v\nwant\n%v", after, err, before)
	}
	if err := s.Namespace("list-x").Update(key, listRelease("list-x", "a", 1, release.StatusSuperseded, nil)); err != nil {
		t.Fatal(err)
	}
	hs, err = b.List(ctx, driver.ListQuery{Namespace: "list-x", NamePrefix: "a"})
	if err != nil || len(hs) != 2 || !hs[0].HasSummary || hs[0].ChartName != "chart-a" {
		t.Fatalf("List after Update = %v, %v; want a.v1 with its summary", hs, err)
	}
}

// Damaged keys read as from Heads: the head is returned with Err (for the
// fields both read) or whole, never failing the listing; a damaged
// index set or registry is replaced by a scan. List of every revision
// returns the keys Heads returns, with Err on the same ones, except where
// only one of them reads the damaged field.
func TestListDamage(t *testing.T) {
	ctx := context.Background()
	key := driver.MakeKey("a", 2) // the latest revision of a
	type variant struct {
		what string
		do   func(b *redisBackend) error
		// listErr and headsErr: whether List and Heads report a.v2 damaged.
		listErr, headsErr bool
		noSummary         bool
	}
	head := func(b *redisBackend) string { return b.k.head("list-x", key) }
	edit := func(f func(m map[string]string)) func(b *redisBackend) error {
		return func(b *redisBackend) error { return editIndex(ctx, b, head(b), f) }
	}
	var vs []variant
	for _, f := range append([]string{fRev, fIndex}, headPartFields...) {
		damaged := f != fRev // a head without its rev is one whose rev is empty
		vs = append(vs, variant{what: "field " + f + " removed", do: func(b *redisBackend) error { return b.c.HDel(ctx, head(b), f).Err() },
			listErr: damaged, headsErr: damaged})
	}
	for i, f := range indexItems {
		// The items from f on cut off: an index that does not parse,
		// for both, unless all of the summary is cut (a head without
		// one).
		cut := edit(func(m map[string]string) {
			for _, g := range indexItems[i:] {
				delete(m, g)
			}
		})
		vs = append(vs, variant{what: "index cut before " + f, do: cut, listErr: f != fChartName, headsErr: f != fChartName, noSummary: f == fChartName})
	}
	for _, v := range []struct{ what, value string }{{"garbled", "x"}, {"with a negative length", "-1:"}, {"one byte short", "4:name"[:5]},
		{"with an item too many", packIndex(make([]string, len(indexItems)+1)...)}} {
		vs = append(vs, variant{what: "index " + v.what, do: func(b *redisBackend) error { return b.c.HSet(ctx, head(b), fIndex, v.value).Err() },
			listErr: true, headsErr: true})
	}
	// A head written before the index was packed: its fields are read.
	unpacked := func(do func(b *redisBackend) error) func(b *redisBackend) error {
		return func(b *redisBackend) error { return errors.Join(unpackHead(ctx, b, head(b)), do(b)) }
	}
	for _, f := range headIndexFields {
		vs = append(vs, variant{what: "unpacked field " + f + " removed", do: unpacked(func(b *redisBackend) error { return b.c.HDel(ctx, head(b), f).Err() }),
			listErr: true, headsErr: true})
	}
	for _, f := range summaryFields {
		vs = append(vs, variant{what: "unpacked field " + f + " removed", do: unpacked(func(b *redisBackend) error { return b.c.HDel(ctx, head(b), f).Err() }),
			listErr: true})
	}
	vs = append(vs,
		variant{what: "unpacked", do: unpacked(func(*redisBackend) error { return nil })},
		variant{what: "unpacked, summary marker removed", do: unpacked(func(b *redisBackend) error { return b.c.HDel(ctx, head(b), fSummary).Err() }), noSummary: true},
		variant{what: "unpacked, summary marker garbled", do: unpacked(func(b *redisBackend) error { return b.c.HSet(ctx, head(b), fSummary, "x").Err() }), listErr: true},
		variant{what: "unpacked, labels and version garbled", do: unpacked(func(b *redisBackend) error {
			return b.c.HSet(ctx, head(b), fLabels, "{not json", fVersion, "seven").Err()
		}), listErr: true, headsErr: true},
		variant{what: "labels and version garbled", do: edit(func(m map[string]string) { m[fLabels], m[fVersion] = "{not json", "seven" }),
			listErr: true, headsErr: true},
		variant{what: "version of another revision", do: edit(func(m map[string]string) { m[fVersion] = "1" }), listErr: true},
		variant{what: "head replaced by a string", do: func(b *redisBackend) error {
			if err := b.c.Del(ctx, head(b)).Err(); err != nil {
				return err
			}
			return b.c.Set(ctx, head(b), "x", 0).Err()
		}, listErr: true, headsErr: true},
		variant{what: "head replaced by a set", do: func(b *redisBackend) error {
			if err := b.c.Del(ctx, head(b)).Err(); err != nil {
				return err
			}
			return b.c.SAdd(ctx, head(b), "x").Err()
		}, listErr: true, headsErr: true},
		variant{what: "set of all releases replaced by a string", do: func(b *redisBackend) error {
			return b.c.Set(ctx, b.k.all("list-x"), "x", 0).Err()
		}},
		variant{what: "registry replaced by a string", do: func(b *redisBackend) error {
			return b.c.Set(ctx, b.k.namespaces(), "x", 0).Err()
		}},
	)
	for _, v := range vs {
		t.Run(strings.ReplaceAll(v.what, " ", "_"), func(t *testing.T) {
			s, b := listStore(t)
			seedList(t, s)
			if err := v.do(b); err != nil {
				t.Fatal(err)
			}
			for _, ns := range []string{"list-x", ""} {
				all, err := b.List(ctx, driver.ListQuery{Namespace: ns})
				if err != nil {
					t.Fatalf("List %q: %v", ns, err)
				}
				heads, err := b.Heads(ctx, driver.Query{Namespace: ns})
				if err != nil {
					t.Fatalf("Heads %q: %v", ns, err)
				}
				// Heads orders a head whose name is missing by its empty
				// name, List by its key: compared by key.
				byKey := map[string]*driver.Head{}
				for _, h := range heads {
					byKey[h.Namespace+"/"+h.Key] = h
				}
				if got, want := sortedKeys(all), sortedKeys(heads); got != want {
					t.Fatalf("List %q = %s; Heads = %s", ns, got, want)
				}
				for _, h := range all {
					isA := h.Namespace == "list-x" && h.Key == key
					hh := byKey[h.Namespace+"/"+h.Key]
					if (h.Err != nil) != (isA && v.listErr) {
						t.Fatalf("List %q: %s/%s: Err %v", ns, h.Namespace, h.Key, h.Err)
					}
					if (hh.Err != nil) != (isA && v.headsErr) {
						t.Fatalf("Heads %q: %s/%s: Err %v", ns, h.Namespace, h.Key, hh.Err)
					}
					if h.Err == nil && (h.HasSummary != !(isA && v.noSummary) || h.Name != hh.Name || h.Version != hh.Version ||
						h.Status != hh.Status || fmt.Sprint(h.Labels) != fmt.Sprint(hh.Labels) || h.Body != nil) {
						t.Fatalf("List %q: %+v; Heads: %+v", ns, h, hh)
					}
				}
				latest, err := b.List(ctx, driver.ListQuery{Namespace: ns, Latest: true, NamePrefix: "a"})
				if err != nil {
					t.Fatalf("List %q of the latest: %v", ns, err)
				}
				if got := headKeys(latest); ns == "" && got != "list-x/"+key+" list-y/"+key || ns != "" && got != "list-x/"+key {
					t.Fatalf("List %q of the latest of a = %s", ns, got)
				}
			}
		})
	}
}

func sortedKeys(hs []*driver.Head) string {
	out := strings.Fields(headKeys(hs))
	slices.Sort(out)
	return strings.Join(out, " ")
}

func headKeys(hs []*driver.Head) string {
	var out []string
	for _, h := range hs {
		out = append(out, h.Namespace+"/"+h.Key)
	}
	return strings.Join(out, " ")
}

// An index entry whose head is gone (left by a Delete that could not read
// the head's labels, or by damage) is not listed: the latest revision is
// then the highest one whose head exists, and the entry is removed. A
// member that is not a release key is listed with Err if it has a head.
func TestListStaleEntries(t *testing.T) {
	s, b := listStore(t)
	seedList(t, s)
	ctx := context.Background()
	stale := driver.MakeKey("a", 9)
	for _, set := range []string{b.k.all("list-x"), b.k.name("list-x", "a"), b.k.status("list-x", "failed")} {
		if err := b.c.SAdd(ctx, set, stale).Err(); err != nil {
			t.Fatal(err)
		}
	}
	if err := b.c.SAdd(ctx, b.k.all("list-x"), "not-a-key", "gone-not-a-key").Err(); err != nil {
		t.Fatal(err)
	}
	if err := b.c.HSet(ctx, b.k.head("list-x", "not-a-key"), fName, "x").Err(); err != nil {
		t.Fatal(err)
	}
	hs, err := b.List(ctx, driver.ListQuery{Namespace: "list-x", Latest: true})
	if err != nil {
		t.Fatal(err)
	}
	// gone-not-a-key has no head: not listed.
	if got, want := headKeys(hs), "list-x/not-a-key list-x/"+driver.MakeKey("a", 2)+" list-x/"+driver.MakeKey("b", 1)+" list-x/"+driver.MakeKey("c", 1); got != want {
		t.Fatalf("List = %s; want %s", got, want)
	}
	if hs[0].Err == nil {
		t.Fatalf("List: the head under a member that is not a release key has no Err")
	}
	for _, m := range []string{stale, "gone-not-a-key"} {
		if ok, err := b.c.SIsMember(ctx, b.k.all("list-x"), m).Result(); err != nil || ok {
			t.Fatalf("the stale entry %s is still in the set of all releases (%v)", m, err)
		}
	}
	hs, err = b.List(ctx, driver.ListQuery{Namespace: "list-x", Statuses: []string{"failed"}})
	if err != nil || headKeys(hs) != "list-x/"+driver.MakeKey("b", 1) {
		t.Fatalf("List of failed revisions = %s, %v", headKeys(hs), err)
	}
	if ok, err := b.c.SIsMember(ctx, b.k.status("list-x", "failed"), stale).Result(); err != nil || ok {
		t.Fatalf("the stale entry is still in the status set (%v)", err)
	}
}
