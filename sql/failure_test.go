package sql_test

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"

	"helm.sh/helm/v3/pkg/chart"
	"helm.sh/helm/v3/pkg/release"

	"github.com/helmstore/helmstore/driver"
	"github.com/helmstore/helmstore/internal/testenv"
)

func smallRelease(name, ns string, v int) *release.Release {
	return &release.Release{Name: name, Namespace: ns, Version: v,
		Chart:    &chart.Chart{Metadata: &chart.Metadata{Name: "c", Version: "1.0.0"}, Templates: []*chart.File{{Name: "t.yaml", Data: []byte("kind: ConfigMap\n")}}},
		Config:   map[string]interface{}{"name": name, "v": float64(v)},
		Manifest: fmt.Sprintf("kind: ConfigMap # %s %d\n", name, v),
		Info:     &release.Info{Status: release.StatusDeployed}}
}

// throughProxy returns conn rewritten to reach its server through a proxy
// the test can cut.
func throughProxy(t *testing.T, name, conn string) (string, *testenv.Proxy) {
	switch name {
	case "postgres":
		u, _ := url.Parse(conn)
		p := testenv.NewProxy(t, u.Host)
		u.Host = p.Addr
		q := u.Query()
		q.Set("connect_timeout", "2")
		u.RawQuery = q.Encode()
		return u.String(), p
	case "mysql":
		re := regexp.MustCompile(`tcp\(([^)]*)\)`)
		p := testenv.NewProxy(t, re.FindStringSubmatch(conn)[1])
		return re.ReplaceAllString(conn, "tcp("+p.Addr+")"), p
	}
	t.Fatalf("no proxy for %s", name)
	return "", nil
}

// A connection failure is an error, never "not found" or "exists".
func TestConnectionFailureIsNotNotFound(t *testing.T) {
	for _, c := range []struct {
		name string
		conn func(t *testing.T) string
	}{{"postgres", func(t *testing.T) string { return testenv.Postgres(t) }}, {"mysql", func(t *testing.T) string { return testenv.MySQL(t) }}} {
		t.Run(c.name, func(t *testing.T) {
			conn, proxy := throughProxy(t, c.name, c.conn(t))
			s := openStore(t, c.name, conn)
			defer s.Close()
			if err := s.Create(key("app", 1), smallRelease("app", "default", 1)); err != nil {
				t.Fatal(err)
			}
			proxy.Cut()
			ops := map[string]error{}
			_, ops["get"] = s.Get(key("app", 1))
			_, ops["get missing"] = s.Get(key("nope", 1))
			_, ops["list"] = s.List(func(*release.Release) bool { return true })
			_, ops["query"] = s.Query(map[string]string{"name": "app"})
			ops["create"] = s.Create(key("app", 2), smallRelease("app", "default", 2))
			ops["update"] = s.Update(key("app", 1), smallRelease("app", "default", 1))
			_, ops["delete"] = s.Delete(key("app", 1))
			for op, err := range ops {
				if err == nil {
					t.Fatalf("%s succeeded with the server unreachable", op)
				}
				if errors.Is(err, driver.ErrReleaseNotFound) || errors.Is(err, driver.ErrReleaseExists) {
					t.Fatalf("%s: a connection failure was reported as %v", op, err)
				}
			}
			if !strings.Contains(ops["get"].Error(), key("app", 1)) {
				t.Fatalf("get error does not name the release: %v", ops["get"])
			}
		})
	}
}

// Corrupted stored bytes give a clear error naming the release and part;
// List skips (and logs) the corrupted release, as Helm's drivers do.
func TestCorruptedBytes(t *testing.T) {
	path := filepath.Join(t.TempDir(), "helm.db")
	var logged []string
	var mu sync.Mutex
	s := openStore(t, "sqlite", path, driver.WithCacheBytes(0), driver.WithLog(func(f string, v ...interface{}) {
		mu.Lock()
		logged = append(logged, fmt.Sprintf(f, v...))
		mu.Unlock()
	}))
	defer s.Close()
	for _, n := range []string{"good", "bad"} {
		if err := s.Create(key(n, 1), smallRelease(n, "default", 1)); err != nil {
			t.Fatal(err)
		}
	}
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var values string
	if err := db.QueryRow("SELECT values_digest FROM helmstore_releases WHERE release_key = ?", key("bad", 1)).Scan(&values); err != nil {
		t.Fatal(err)
	}
	corrupt := func(q string, args ...any) {
		t.Helper()
		if _, err := db.Exec(q, args...); err != nil {
			t.Fatal(err)
		}
	}
	check := func(what, wantIn string) {
		t.Helper()
		_, err := s.Get(key("bad", 1))
		if err == nil || !strings.Contains(err.Error(), key("bad", 1)) || !strings.Contains(err.Error(), wantIn) {
			t.Fatalf("%s: got %v; want an error naming the release and %q", what, err, wantIn)
		}
		if errors.Is(err, driver.ErrReleaseNotFound) {
			t.Fatalf("%s reported as not found", what)
		}
		rs, err := s.List(func(*release.Release) bool { return true })
		if err != nil || len(rs) != 1 || rs[0].Name != "good" {
			t.Fatalf("%s: list returned %d releases, %v; want only the good one", what, len(rs), err)
		}
	}

	corrupt("UPDATE helmstore_part_chunks SET data = ? WHERE digest = ?", []byte{1, 0x28, 0xb5, 0x2f, 0xfd, 0, 0, 0}, values)
	check("a garbled part", values)
	_, err = s.Get(key("bad", 1))
	if !errors.Is(err, driver.ErrCorrupt) {
		t.Fatalf("a garbled part is not ErrCorrupt: %v", err)
	}
	corrupt("UPDATE helmstore_part_chunks SET data = ? WHERE digest = ?", []byte("\x00{\"other\":\"values\"}"), values)
	check("a part whose bytes do not match its digest", values)
	corrupt("DELETE FROM helmstore_part_chunks WHERE digest = ?", values)
	check("a missing part", "missing")
	corrupt("UPDATE helmstore_releases SET values_digest = '', body = ? WHERE release_key = ?", []byte{7, 7, 7}, key("bad", 1))
	check("a garbled head", "corrupted")
	corrupt("UPDATE helmstore_releases SET labels = '{not json' WHERE release_key = ?", key("bad", 1))
	if _, err := s.Get(key("bad", 1)); err == nil || !strings.Contains(err.Error(), key("bad", 1)) {
		t.Fatalf("garbled labels: %v", err)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(logged) == 0 || !strings.Contains(strings.Join(logged, "\n"), key("bad", 1)) {
		t.Fatalf("skipping a corrupted release in List was not logged: %q", logged)
	}
}

// Several processes opening a fresh database at once: migrations run once,
// every process opens it, and the store works.
func TestConcurrentOpenFromProcesses(t *testing.T) {
	for _, c := range []struct {
		name string
		conn func(t *testing.T) string
	}{
		{"sqlite", func(t *testing.T) string { return filepath.Join(t.TempDir(), "fresh.db") }},
		{"postgres", func(t *testing.T) string { return testenv.Postgres(t) }},
		{"mysql", func(t *testing.T) string { return testenv.MySQL(t) }},
	} {
		t.Run(c.name, func(t *testing.T) {
			conn := c.conn(t)
			const n = 4
			var wg sync.WaitGroup
			outs := make([]string, n)
			errs := make([]error, n)
			for i := 0; i < n; i++ {
				wg.Add(1)
				go func(i int) {
					defer wg.Done()
					cmd := exec.Command(os.Args[0]) // runs openChild (see init), no test
					cmd.Env = append(os.Environ(), "HELMSTORE_OPEN_CHILD="+c.name, "HELMSTORE_OPEN_CONN="+conn, fmt.Sprintf("HELMSTORE_OPEN_ID=%d", i))
					out, err := cmd.CombinedOutput()
					outs[i], errs[i] = string(out), err
				}(i)
			}
			wg.Wait()
			for i := range errs {
				if errs[i] != nil || !strings.Contains(outs[i], "opened") {
					t.Fatalf("process %d: %v\n%s", i, errs[i], outs[i])
				}
			}
			s := openStore(t, c.name, conn)
			defer s.Close()
			rs, err := s.Query(map[string]string{"owner": "helm"})
			if err != nil || len(rs) != n {
				t.Fatalf("after %d processes each created a release: %d, %v", n, len(rs), err)
			}
		})
	}
}

// TestOpenChild is run by TestConcurrentOpenFromProcesses in child p// A test binary started with HELMSTORE_OPEN_CHILD set is a child process of
// TestConcurrentOpenFromProcesses: it runs openChild instead of the tests.
func init() {
	if name := os.Getenv("HELMSTORE_OPEN_CHILD"); name != "" {
		os.Exit(openChild(name))
	}
}

// openChild opens the store, creates one release and says "opened".
func openChild(name string) int {
	s, err := driver.Open(context.Background(), name, os.Getenv("HELMSTORE_OPEN_CONN"))
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer s.Close()
	id := os.Getenv("HELMSTORE_OPEN_ID")
	if err := s.Create(key("p"+id, 1), smallRelease("p"+id, "default", 1)); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	fmt.Println("opened")
	return 0
}
