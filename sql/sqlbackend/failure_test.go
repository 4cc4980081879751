package sqlbackend_test

import (
	"context"
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

	"helm.sh/helm/v3/pkg/release"

	"github.com/helmstore/helmstore/helm3"
	"github.com/helmstore/helmstore/internal/testing/sqltest"
	"github.com/helmstore/helmstore/internal/testing/testenv"
	"github.com/helmstore/helmstore/internal/testing/testenv/sqlenv"
)

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

// A connection failure is driver.ErrUnavailable, never "not found" or
// "exists".
func TestConnectionFailureIsNotNotFound(t *testing.T) {
	for _, c := range []struct {
		name string
		conn func(t *testing.T) string
	}{{"postgres", func(t *testing.T) string { return sqlenv.Postgres(t) }}, {"mysql", func(t *testing.T) string { return sqlenv.MySQL(t) }}} {
		t.Run(c.name, func(t *testing.T) {
			conn, proxy := throughProxy(t, c.name, c.conn(t))
			s := sqltest.Open(t, c.name, conn)
			defer s.Close()
			if err := s.Create(sqltest.Key("app", 1), sqltest.Release("app", "default", 1)); err != nil {
				t.Fatal(err)
			}
			proxy.Cut()
			ops := map[string]error{}
			_, ops["get"] = s.Get(sqltest.Key("app", 1))
			_, ops["get missing"] = s.Get(sqltest.Key("nope", 1))
			_, ops["list"] = s.List(func(*release.Release) bool { return true })
			_, ops["query"] = s.Query(map[string]string{"name": "app"})
			ops["create"] = s.Create(sqltest.Key("app", 2), sqltest.Release("app", "default", 2))
			ops["update"] = s.Update(sqltest.Key("app", 1), sqltest.Release("app", "default", 1))
			_, ops["delete"] = s.Delete(sqltest.Key("app", 1))
			for op, err := range ops {
				if err == nil {
					t.Fatalf("%s succeeded with the server unreachable", op)
				}
				if errors.Is(err, helm3.ErrReleaseNotFound) || errors.Is(err, helm3.ErrReleaseExists) {
					t.Fatalf("%s: a connection failure was reported as %v", op, err)
				}
				if !errors.Is(err, helm3.ErrUnavailable) {
					t.Fatalf("%s: a connection failure does not wrap helm3.ErrUnavailable: %v", op, err)
				}
			}
			if !strings.Contains(ops["get"].Error(), sqltest.Key("app", 1)) {
				t.Fatalf("get error does not name the release: %v", ops["get"])
			}
		})
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
		{"postgres", func(t *testing.T) string { return sqlenv.Postgres(t) }},
		{"mysql", func(t *testing.T) string { return sqlenv.MySQL(t) }},
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
			s := sqltest.Open(t, c.name, conn)
			defer s.Close()
			rs, err := s.Query(map[string]string{"owner": "helm"})
			if err != nil || len(rs) != n {
				t.Fatalf("after %d processes each created a release: %d, %v", n, len(rs), err)
			}
		})
	}
}

// A test binary started with HELMSTORE_OPEN_CHILD set is a child process of
// TestConcurrentOpenFromProcesses: it runs openChild instead of the tests.
func init() {
	if name := os.Getenv("HELMSTORE_OPEN_CHILD"); name != "" {
		os.Exit(openChild(name))
	}
}

// openChild opens the store, creates one release and says "opened".
func openChild(name string) int {
	s, err := helm3.Open(context.Background(), name, os.Getenv("HELMSTORE_OPEN_CONN"))
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer s.Close()
	id := os.Getenv("HELMSTORE_OPEN_ID")
	if err := s.Create(sqltest.Key("p"+id, 1), sqltest.Release("p"+id, "default", 1)); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	fmt.Println("opened")
	return 0
}
