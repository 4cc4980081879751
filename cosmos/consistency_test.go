package cosmos

import (
	"context"
	"strings"
	"testing"

	"github.com/helmstore/helmstore/driver"

	"github.com/helmstore/helmstore/helm3"
)

// TestConsistencyChecked: the test server reports Session consistency, as
// the emulator does by default: Open refuses it, naming the level and what
// is needed, unless the connection string allows weak consistency; an
// account with several write regions is refused whatever it allows.
func TestConsistencyChecked(t *testing.T) {
	conn := strings.Replace(connString(t), "AllowWeakConsistency=true;", "", 1)
	cfg := &driver.Config{Name: Name, ConnectionString: conn, Timeout: helm3.DefaultTimeout}
	s, err := Open(context.Background(), cfg)
	if err == nil {
		s.Close()
		t.Fatal("Open of an account at Session consistency succeeded without AllowWeakConsistency=true")
	}
	if !strings.Contains(err.Error(), "Session") || !strings.Contains(err.Error(), "Strong") {
		t.Fatalf("Open of an account at Session consistency: %v; want the level and what is needed", err)
	}
	t.Logf("refused: %v", err)
	cfg.ConnectionString = conn + "AllowWeakConsistency=true;"
	s, err = Open(context.Background(), cfg)
	if err != nil {
		t.Fatalf("Open with AllowWeakConsistency=true: %v", err)
	}
	s.Close()

	for _, c := range []struct {
		a         *accountInfo
		allowWeak bool
		ok        bool
	}{
		{&accountInfo{seen: true, consistency: "Strong"}, false, true},
		{&accountInfo{seen: true, consistency: "BoundedStaleness"}, false, true},
		{&accountInfo{seen: true, consistency: "Eventual"}, false, false},
		{&accountInfo{seen: true, consistency: "Eventual"}, true, true},
		{&accountInfo{seen: true, consistency: "Strong", multiWrite: true}, true, false},
	} {
		if err := c.a.check(c.allowWeak); (err == nil) != c.ok {
			t.Errorf("%s (multi-write %v, allow weak %v): %v", c.a.consistency, c.a.multiWrite, c.allowWeak, err)
		}
	}
}
