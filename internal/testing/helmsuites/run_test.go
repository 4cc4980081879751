package helmsuites

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// events is test2json's output of a binary that ran TestA (passed),
// TestB with a subtest that failed, then started TestC and panicked in a
// goroutine of its own, so that TestC never finished.
const events = `{"Action":"start"}
{"Action":"run","Test":"TestA"}
{"Action":"output","Test":"TestA","Output":"=== RUN   TestA\n"}
{"Action":"pass","Test":"TestA"}
{"Action":"run","Test":"TestB"}
{"Action":"run","Test":"TestB/sub"}
{"Action":"output","Test":"TestB/sub","Output":"    b_test.go:9: bad\n"}
{"Action":"fail","Test":"TestB/sub"}
{"Action":"fail","Test":"TestB"}
{"Action":"run","Test":"TestC"}
{"Action":"output","Test":"TestC","Output":"=== RUN   TestC\n"}
{"Action":"output","Output":"panic: boom\n"}
{"Action":"output","Output":"goroutine 7 [running]:\n"}
{"Action":"fail"}
`

func TestParseEventsAndCrash(t *testing.T) {
	r := &run{store: "sqlite", tests: map[string]*testResult{}}
	loose, err := r.parseEvents(strings.NewReader(events))
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(r.order, " "); got != "TestA TestB TestB/sub TestC" {
		t.Errorf("order %q", got)
	}
	for name, want := range map[string]string{"TestA": "pass", "TestB": "fail", "TestB/sub": "fail", "TestC": ""} {
		if got := r.tests[name].action; got != want {
			t.Errorf("%s: action %q, want %q", name, got, want)
		}
	}
	if got := reasonOf(r.tests["TestB/sub"].output); got != "bad" {
		t.Errorf("TestB/sub: reason %q", got)
	}
	r.crash(0, loose, "exit status 2")
	if len(r.crashes) != 1 || r.crashes[0] != "TestC: exit status 2: panic: boom" {
		t.Errorf("crashes %q, want TestC's panic", r.crashes)
	}
	if got := reasonOf(r.tests["TestC"].output); got != "panic: boom" {
		t.Errorf("TestC: reason %q, want the panic that ended the binary", got)
	}
	if _, err := r.parseEvents(strings.NewReader("{not json")); err == nil {
		t.Error("parseEvents of garbage: no error")
	}
}

func TestCountStores(t *testing.T) {
	dir := t.TempDir()
	trace := filepath.Join(dir, "trace")
	if _, err := countStores(trace, "sqlite"); err == nil || !strings.Contains(err.Error(), "no store") {
		t.Errorf("no trace: %v, want an error saying the fixture made no store", err)
	}
	os.WriteFile(trace, []byte("sqlite\nsqlite\n"), 0o644)
	if n, err := countStores(trace, "sqlite"); n != 2 || err != nil {
		t.Errorf("countStores = %d, %v; want 2", n, err)
	}
	os.WriteFile(trace, []byte("sqlite\nmemory\n"), 0o644)
	if _, err := countStores(trace, "sqlite"); err == nil {
		t.Error("a store of another kind: no error")
	}
}
