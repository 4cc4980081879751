package redis

import (
	"bytes"
	"context"
	"fmt"
	"log"
	"strings"
	"sync"
	"testing"

	"github.com/helmstore/helmstore/helm3"
	"github.com/helmstore/helmstore/internal/testing/testenv/redisenv"
)

// A go-redis line that names no store goes to the log of the one store
// open, when only one is; with two open, to the process's standard log
// and neither store's; once the second is closed, to the first's again.
func TestGoRedisUnattributedOneStore(t *testing.T) {
	// Stores other tests of the package left open are set aside.
	openSinks.mu.Lock()
	saved := openSinks.m
	openSinks.m = map[*logSink]bool{}
	openSinks.mu.Unlock()
	t.Cleanup(func() {
		openSinks.mu.Lock()
		for s := range openSinks.m {
			saved[s] = true
		}
		openSinks.m = saved
		openSinks.mu.Unlock()
	})
	var std bytes.Buffer
	old, flags := log.Writer(), log.Flags()
	log.SetOutput(&std)
	t.Cleanup(func() { log.SetOutput(old); log.SetFlags(flags) })

	type sink struct {
		mu sync.Mutex
		b  strings.Builder
	}
	logTo := func(s *sink) helm3.Option {
		return helm3.WithLog(func(f string, v ...interface{}) {
			s.mu.Lock()
			fmt.Fprintf(&s.b, f+"\n", v...)
			s.mu.Unlock()
		})
	}
	has := func(s *sink, line string) bool {
		s.mu.Lock()
		defer s.mu.Unlock()
		return strings.Contains(s.b.String(), line)
	}
	var la, lb sink
	conn := redisenv.URL(t)
	a, err := helm3.Open(context.Background(), Name, conn, logTo(&la))
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	router{}.Printf(context.Background(), "line %d", 1)
	if !has(&la, "line 1") || strings.Contains(std.String(), "line 1") {
		t.Fatalf("one store open: its log %q, the standard log %q; want the line in the store's log only", la.b.String(), std.String())
	}
	b, err := helm3.Open(context.Background(), Name, conn, logTo(&lb))
	if err != nil {
		t.Fatal(err)
	}
	router{}.Printf(context.Background(), "line %d", 2)
	if has(&la, "line 2") || has(&lb, "line 2") || !strings.Contains(std.String(), "line 2") {
		t.Fatalf("two stores open: the line went to %q, %q, standard %q; want the standard log only", la.b.String(), lb.b.String(), std.String())
	}
	b.Close()
	router{}.Printf(context.Background(), "line %d", 3)
	if !has(&la, "line 3") || has(&lb, "line 3") {
		t.Fatalf("the second store closed: the line went to %q, %q; want the first store's log", la.b.String(), lb.b.String())
	}
}
