package helm4codec

import (
	"bytes"
	"encoding/json"
	"reflect"
	"testing"

	rspb "helm.sh/helm/v4/pkg/release/v1"

	"github.com/helmstore/helmstore/internal/testing/fixture"
)

// headCases are heads decodeHead must decode as Helm does: the ones
// helmstore writes (through either face), and ones it never writes, each
// named for what it tries.
func headCases(t testing.TB) map[string][]byte {
	h4 := stackHead(t)
	r3 := fixture.StackRevisions("bench", "default", 2)[1]
	r3.Chart, r3.Config, r3.Manifest = nil, nil, ""
	h3, err := json.Marshal(r3)
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := json.Indent(&buf, h4, "", "  "); err != nil {
		t.Fatal(err)
	}
	info := func(s string) []byte { return []byte(`{"name":"a","version":2,"info":` + s + `}`) }
	run := func(s string) []byte { return []byte(`{"name":"a","hooks":[{"name":"h","last_run":` + s + `}]}`) }
	return map[string][]byte{
		"helm 4 face's head":   h4,
		"helm 3 face's head":   h3,
		"indented":             buf.Bytes(),
		"no info":              []byte(`{"name":"a","version":1}`),
		"info null":            info(`null`),
		"info empty":           info(`{}`),
		"info not an object":   info(`[1,2]`),
		"info a string":        info(`"x"`),
		"times empty":          info(`{"first_deployed":"","last_deployed":"","deleted":"","status":"deployed"}`),
		"times null":           info(`{"first_deployed":null,"last_deployed":null,"deleted":null}`),
		"time escaped":         info(`{"first_deployed":"2026\u002d01-01T00:00:00Z"}`),
		"time escaped slash":   info(`{"first_deployed":"2026-01-01T00:00:00Z\/"}`),
		"time invalid":         info(`{"first_deployed":"yesterday"}`),
		"time a number":        info(`{"first_deployed":5}`),
		"time with zone":       info(`{"last_deployed":"2026-01-01T10:00:00.123456789+02:00"}`),
		"member in capitals":   info(`{"Status":"failed","status":"deployed"}`),
		"member twice":         info(`{"status":"failed","status":"deployed"}`),
		"member case folded":   info(`{"STATUS":"failed"}`),
		"member escaped name":  info(`{"st\u0061tus":"failed"}`),
		"unknown member":       info(`{"status":"deployed","extra":{"a":[1,"}"]}}`),
		"resources":            info(`{"resources":{}}`),
		"resources objects":    info(`{"resources":{"v1/Pod":[{"kind":"Pod"}]}}`),
		"rollback":             info(`{"rollback_revision":3}`),
		"rollback negative":    info(`{"rollback_revision":-0}`),
		"rollback float":       info(`{"rollback_revision":3.0}`),
		"rollback exponent":    info(`{"rollback_revision":1e2}`),
		"rollback huge":        info(`{"rollback_revision":9007199254740993}`),
		"rollback a string":    info(`{"rollback_revision":"3"}`),
		"status a number":      info(`{"status":3}`),
		"strings escaped":      info(`{"notes":"a\n\"b\" \u00e9 <x> \ud83d\ude00","description":"\u2028"}`),
		"invalid utf-8":        info("{\"notes\":\"a\xffb\"}"),
		"info twice":           []byte(`{"info":{"first_deployed":"2026-01-01T00:00:00Z","status":"failed"},"info":{"notes":"n"}}`),
		"info then null":       []byte(`{"info":{"status":"failed"},"info":null}`),
		"fast then slow":       []byte(`{"info":{"deleted":"2026-01-01T00:00:00Z"},"info":{"Status":"x"}}`),
		"hooks null":           []byte(`{"hooks":null}`),
		"hooks empty":          []byte(`{"hooks":[]}`),
		"hook null":            []byte(`{"hooks":[null,{"name":"h"}]}`),
		"hook only last run":   []byte(`{"hooks":[{"last_run":{"phase":"Running"}}]}`),
		"last run null":        run(`null`),
		"last run empty times": run(`{"started_at":"","completed_at":"","phase":"Succeeded"}`),
		"last run twice":       []byte(`{"hooks":[{"last_run":{"started_at":"2026-01-01T00:00:00Z"},"last_run":{"phase":"Failed"}}]}`),
		"last run then null":   []byte(`{"hooks":[{"last_run":{"started_at":"2026-01-01T00:00:00Z"},"last_run":null}]}`),
		"last run capitals":    run(`{"Phase":"Failed"}`),
		"last run phase null":  run(`{"phase":null}`),
		"last run array":       run(`[]`),
		"hooks twice":          []byte(`{"hooks":[{"name":"a","last_run":{"phase":"Failed"}}],"hooks":[{"weight":2}]}`),
		"apply method":         []byte(`{"name":"a","apply_method":"ssa"}`),
		"not an object":        []byte(`[]`),
		"truncated":            []byte(`{"name":"a","info":{"status":`),
	}
}

// TestDecodeHeadIsHelms checks decodeHead against json.Unmarshal into Helm
// 4's release (Helm's own UnmarshalJSON): the same release or both an
// error, on every head of headCases.
func TestDecodeHeadIsHelms(t *testing.T) {
	for name, head := range headCases(t) {
		t.Run(name, func(t *testing.T) { sameAsHelm(t, head) })
	}
}

// TestDecodeHeadFastPath checks that the heads helmstore writes take the
// direct path: every Info and last_run in them is plain.
func TestDecodeHeadFastPath(t *testing.T) {
	cases := headCases(t)
	for _, name := range []string{"helm 4 face's head", "helm 3 face's head", "indented"} {
		var raw struct {
			Info  json.RawMessage
			Hooks []struct {
				LastRun json.RawMessage `json:"last_run"`
			}
		}
		if err := json.Unmarshal(cases[name], &raw); err != nil {
			t.Fatal(err)
		}
		if _, ok := plain(raw.Info, infoMembers); !ok {
			t.Errorf("%s: its info is not plain: %s", name, raw.Info)
		}
		if len(raw.Hooks) == 0 {
			t.Fatalf("%s: no hooks", name)
		}
		for _, h := range raw.Hooks {
			if _, ok := plain(h.LastRun, execMembers); !ok {
				t.Errorf("%s: a last_run is not plain: %s", name, h.LastRun)
			}
		}
	}
}

func sameAsHelm(t *testing.T, head []byte) {
	t.Helper()
	var want rspb.Release
	werr := json.Unmarshal(head, &want)
	var got rspb.Release
	gerr := decodeHead(head, &got)
	if (werr == nil) != (gerr == nil) {
		t.Fatalf("decodeHead: error %v, Helm's: %v", gerr, werr)
	}
	if werr == nil && !reflect.DeepEqual(&got, &want) {
		gj, _ := json.Marshal(&got)
		wj, _ := json.Marshal(&want)
		t.Fatalf("decodeHead differs from Helm's decoding:\n got %.800s\nwant %.800s", gj, wj)
	}
}

// FuzzDecodeHead checks decodeHead against Helm's decoding on any head
// (its seeds are headCases).
func FuzzDecodeHead(f *testing.F) {
	for _, head := range headCases(f) {
		f.Add(head)
	}
	f.Fuzz(func(t *testing.T, head []byte) { sameAsHelm(t, head) })
}
