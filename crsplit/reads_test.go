package crsplit

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"helm.sh/helm/v3/pkg/release"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/helmstore/helmstore/driver"
	"github.com/helmstore/helmstore/helm3"
	"github.com/helmstore/helmstore/internal/testing/fixture"
	"github.com/helmstore/helmstore/internal/testing/testenv/kubeenv"
)

// cacheReads counts the GETs a store sends with resourceVersion=0 (reads
// the API server answers from its watch cache) and, when lagging, answers
// each of them itself with the NotFound a watch cache that has not yet
// seen the object gives.
type cacheReads struct {
	lagging bool
	mu      sync.Mutex
	paths   []string
}

func (c *cacheReads) wrap(rt http.RoundTripper) http.RoundTripper {
	return roundTripper(func(req *http.Request) (*http.Response, error) {
		if req.Method != http.MethodGet || req.URL.Query().Get("resourceVersion") != "0" {
			return rt.RoundTrip(req)
		}
		c.mu.Lock()
		c.paths = append(c.paths, req.URL.Path)
		c.mu.Unlock()
		if !c.lagging {
			return rt.RoundTrip(req)
		}
		parts := strings.Split(req.URL.Path, "/")
		res, name := parts[len(parts)-2], parts[len(parts)-1]
		body, _ := json.Marshal(metav1.Status{
			TypeMeta: metav1.TypeMeta{Kind: "Status", APIVersion: "v1"},
			Status:   metav1.StatusFailure, Reason: metav1.StatusReasonNotFound, Code: http.StatusNotFound,
			Message: fmt.Sprintf("%s.%s %q not found", res, Group, name),
			Details: &metav1.StatusDetails{Name: name, Group: Group, Kind: res},
		})
		return &http.Response{StatusCode: http.StatusNotFound, Header: http.Header{"Content-Type": {"application/json"}},
			Body: io.NopCloser(bytes.NewReader(body)), Request: req}, nil
	})
}

func (c *cacheReads) count(res string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := 0
	for _, p := range c.paths {
		if strings.Contains(p, "/"+res+"/") {
			n++
		}
	}
	return n
}

// TestPartsReadFromWatchCache: a cold read of a release with a chunked
// chart asks the watch cache for its parts and chunks (and nothing else),
// and when the cache does not have them yet, reads them from etcd instead
// of reporting them missing.
func TestPartsReadFromWatchCache(t *testing.T) {
	k := cluster(t)
	ns := newNamespace(t, k)
	want := fixture.LargeRelease("big", ns, 1)
	writer, wb := openAs(t, k, kubeenv.Admin, ns)
	if err := writer.Create(key("big", 1), want); err != nil {
		t.Fatal(err)
	}
	// Committed: readers then read each part once (before the commit they
	// would also check the parts are owned).
	wb.WaitCommits()
	for _, lagging := range []bool{false, true} {
		reads := &cacheReads{lagging: lagging}
		cfg := k.Config(kubeenv.Admin)
		cfg.Wrap(reads.wrap)
		s, err := openStore(ctxT(t), cfg, helm3.WithCacheBytes(0))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		got, err := s.Namespace(ns).Get(key("big", 1))
		if err != nil {
			t.Fatalf("lagging cache %v: %v", lagging, err)
		}
		sameAsHelm(t, fmt.Sprintf("read with lagging cache %v", lagging), got, want)
		// Lagging, the chart is read from etcd with its chunks.
		if reads.count(resCharts) != 1 || reads.count(resValues) != 1 || reads.count(resManifests) != 1 || (reads.count(resChunks) == 0) != lagging {
			t.Fatalf("lagging cache %v: cached reads %q, want the chart, values and manifest, and the chart's chunks unless lagging", lagging, reads.paths)
		}
		if n := reads.count(resReleases); n != 0 {
			t.Fatalf("%d Release objects read from the watch cache: a Release can change, it must be read consistently", n)
		}
	}
}

// TestCorruptedParts: a chunk of the chart or a Values object whose bytes
// were changed in the cluster makes Get fail with driver.ErrCorrupt naming
// the release (not "not found", not a panic, not a wrong release), while
// other releases stay readable. The watch cache may serve the old bytes for
// a moment, so the read is retried until the change shows.
func TestCorruptedParts(t *testing.T) {
	k := cluster(t)
	ns := newNamespace(t, k)
	s, b := openAs(t, k, kubeenv.Admin, ns, helm3.WithCacheBytes(0))
	big := fixture.LargeRelease("big", ns, 1)
	if err := s.Create(key("big", 1), big); err != nil {
		t.Fatal(err)
	}
	small := smallVariant("small", ns, 1, 1, "small")
	good := smallVariant("good", ns, 1, 2, "good")
	for _, r := range []*release.Release{small, good} {
		if err := s.Create(key(r.Name, 1), r); err != nil {
			t.Fatal(err)
		}
	}
	flip := func(res, name string) {
		t.Helper()
		editObject(t, b, res, ns, name, func(obj map[string]any) bool {
			flipData(t, obj["spec"].(map[string]any))
			return true
		})
	}
	corrupted := func(what, k string) {
		t.Helper()
		var err error
		for start := time.Now(); time.Since(start) < 10*time.Second; time.Sleep(50 * time.Millisecond) {
			if _, err = s.Get(k); err != nil {
				break
			}
		}
		t.Logf("%s: %v", what, err)
		if !errors.Is(err, helm3.ErrCorrupt) || errors.Is(err, helm3.ErrReleaseNotFound) || !strings.Contains(err.Error(), k) {
			t.Fatalf("%s: Get = %v; want helm3.ErrCorrupt naming %s", what, err, k)
		}
		if got, err := s.Get(key("good", 1)); err != nil {
			t.Fatalf("%s: another release: %v", what, err)
		} else {
			sameAsHelm(t, what+": another release", got, good)
		}
	}

	chunks := objectNames(t, b, resChunks, ns)
	if len(chunks) == 0 {
		t.Fatal("the large release has no chunks")
	}
	for name := range chunks {
		flip(resChunks, name)
		break
	}
	corrupted("a chart chunk changed", key("big", 1))

	// The small release's values are small enough to be embedded in its
	// Release (spec.embedded) rather than a Values object of their own.
	values := codecDigest(t, small, driver.KindValues)
	if _, ok := objectNames(t, b, resValues, ns)[values]; ok {
		flip(resValues, values)
	} else {
		flipEmbedded(t, b, ns, key("small", 1), values)
	}
	corrupted("the small release's values changed", key("small", 1))
}

// flipEmbedded changes a byte of the frame of part d that the Release
// named name embeds, as an edit in the cluster would.
func flipEmbedded(t *testing.T, b *kubeBackend, ns, name, d string) {
	t.Helper()
	editObject(t, b, resReleases, ns, name, func(obj map[string]any) bool {
		embedded, _ := obj["spec"].(map[string]any)["embedded"].([]any)
		for _, e := range embedded {
			if e := e.(map[string]any); e["digest"] == d {
				flipData(t, e)
				return true
			}
		}
		t.Fatalf("part %s is neither a Values object nor embedded in Release %s", d, name)
		return false
	})
}

// editObject reads the object res/name of ns as JSON fields, lets edit
// change them, and writes it back if edit says so.
func editObject(t *testing.T, b *kubeBackend, res, ns, name string, edit func(obj map[string]any) bool) {
	t.Helper()
	ctx := ctxT(t)
	raw, err := b.c.get(ctx, res, ns, name)
	if err != nil {
		t.Fatal(err)
	}
	var obj map[string]any
	if err := json.Unmarshal(raw, &obj); err != nil {
		t.Fatal(err)
	}
	if !edit(obj) {
		return
	}
	if _, err := b.c.update(ctx, res, ns, name, obj); err != nil {
		t.Fatal(err)
	}
}

// flipData changes the middle byte of the base64 frame in m["data"].
func flipData(t *testing.T, m map[string]any) {
	t.Helper()
	stored, err := base64.StdEncoding.DecodeString(m["data"].(string))
	if err != nil {
		t.Fatal(err)
	}
	stored[len(stored)/2] ^= 0x55
	m["data"] = base64.StdEncoding.EncodeToString(stored)
}
