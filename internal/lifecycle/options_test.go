package lifecycle

import (
	"context"
	"errors"
	"slices"
	"testing"

	"github.com/helmstore/helmstore/internal/registry"
	"helm.sh/helm/v4/pkg/cli"
)

func TestTestFilters(t *testing.T) {
	in, ex := testFilters([]string{"name=a", "!name=b", "! name=c", "other=d", "name=e"})
	if !slices.Equal(in, []string{"a", "e"}) || !slices.Equal(ex, []string{"b", "c"}) {
		t.Errorf("testFilters: include %v, exclude %v; want [a e] and [b c]", in, ex)
	}
}

func TestCheckCascade(t *testing.T) {
	for _, ok := range []string{"", "background", "orphan", "foreground"} {
		if err := checkCascade(ok); err != nil {
			t.Errorf("checkCascade(%q): %v", ok, err)
		}
	}
	err := checkCascade("sideways")
	if err == nil || err.Error() != `invalid cascade value (sideways). Must be "background", "foreground", or "orphan"` {
		t.Errorf("checkCascade(sideways): %v, want helm's message", err)
	}
}

func TestDryRun(t *testing.T) {
	for in, want := range map[string]string{"": "none", "none": "none", "client": "client", "server": "server"} {
		if got, err := dryRun4(in); err != nil || string(got) != want {
			t.Errorf("dryRun4(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	if _, err := dryRun4("maybe"); err == nil {
		t.Error("dryRun4(maybe): no error")
	}
	for _, d := range []string{"true", "false", "none", "client", "server"} {
		if err := checkDryRun3(d); err != nil {
			t.Errorf("checkDryRun3(%q): %v", d, err)
		}
	}
	if err := checkDryRun3("maybe"); !errors.Is(err, errDryRun3) {
		t.Errorf("checkDryRun3(maybe): %v", err)
	}
}

func TestWait(t *testing.T) {
	for s, waits := range map[string]bool{"": false, "hookOnly": false, "watcher": true, "legacy": true} {
		if got := (Wait{Strategy: s}).waits(); got != waits {
			t.Errorf("Wait{%q}.waits() = %v, want %v", s, got, waits)
		}
	}
}

// TestNewRefuses checks that New refuses a Helm other than 3 and 4, and a
// store name no backend registers, with errors errors.Is recognises.
func TestNewRefuses(t *testing.T) {
	ctx := context.Background()
	if _, err := New(ctx, Config{Helm: 5, Settings: cli.New()}); !errors.Is(err, ErrUnknownHelm) {
		t.Errorf("New with Helm 5: %v, want ErrUnknownHelm", err)
	}
	for _, h := range []int{3, 4} {
		if _, err := New(ctx, Config{Helm: h, Settings: cli.New(), Driver: "nosuchstore"}); !errors.Is(err, registry.ErrUnknownDriver) {
			t.Errorf("New on Helm %d with an unknown store: %v, want registry.ErrUnknownDriver", h, err)
		}
	}
}
