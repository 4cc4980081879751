package helmsuites

import (
	"strings"
	"testing"
)

func TestReasonOf(t *testing.T) {
	for _, c := range []struct {
		name   string
		output []string
		want   string
	}{
		{"testify", []string{
			"=== RUN   TestX",
			"    install_test.go:502: ",
			"        \tError Trace:\t/x/install_test.go:502",
			"        \tError:      \tReceived unexpected error:",
			"        \t            \trelease is in namespace \"spaced\"",
			"        \tTest:       \tTestX",
			"--- FAIL: TestX (0.00s)",
		}, `Received unexpected error: release is in namespace "spaced"`},
		{"t.Error", []string{"=== RUN   TestY", "    hooks_test.go:12: got 3, want 4", "    hooks_test.go:13: second"}, "got 3, want 4"},
		{"panic", []string{"--- FAIL: TestZ (0.00s)", "panic: runtime error: invalid memory address [recovered]", "goroutine 1 [running]:"},
			"panic: runtime error: invalid memory address [recovered]"},
		{"other", []string{"=== RUN   TestW", "something printed"}, "something printed"},
		{"nothing of its own", []string{"=== RUN   TestP", "=== RUN   TestP/sub", "--- FAIL: TestP (0.00s)"}, ""},
		{"pointers", []string{"    a_test.go:1: Expected &{x 0xc000123456}, got &{x 0xc000654321}"}, "Expected &{x 0x…}, got &{x 0x…}"},
	} {
		if got := reasonOf(c.output); got != c.want {
			t.Errorf("%s: reasonOf = %q, want %q", c.name, got, c.want)
		}
	}
}

func TestClip(t *testing.T) {
	long := strings.Repeat("é", maxReason)
	got := clip(long)
	if !strings.HasSuffix(got, "…") || len(got) > maxReason+len("…") || !strings.HasPrefix(long, strings.TrimSuffix(got, "…")) {
		t.Errorf("clip of %d bytes = %d bytes %q…", len(long), len(got), got[:20])
	}
	if got := clip("short"); got != "short" {
		t.Errorf("clip(short) = %q", got)
	}
}
