package sql

import (
	"context"
	"errors"
	"net/url"
	"regexp"
	"sync"
	"testing"
	"time"

	"github.com/helmstore/helmstore/driver"
	"github.com/helmstore/helmstore/driver/backend"
	"github.com/helmstore/helmstore/internal/testenv"
)

var probeOnce sync.Once

// A store opened with no options bounds its operations (DefaultTimeout);
// WithTimeout(0) removes the bound. Before, the default was no bound: a Get
// on a blackholed PostgreSQL connection blocked for more than 6 minutes.
func TestDefaultTimeout(t *testing.T) {
	var got time.Duration
	probeOnce.Do(func() {
		driver.Register("timeout-probe", func(ctx context.Context, cfg *driver.Config) (driver.Store, error) {
			got = cfg.Timeout
			return nil, errors.New("probe")
		})
	})
	driver.Open(context.Background(), "timeout-probe", "")
	if got <= 0 || got != driver.DefaultTimeout {
		t.Fatalf("default Timeout %v; want DefaultTimeout (%v), not 0", got, driver.DefaultTimeout)
	}
	driver.Open(context.Background(), "timeout-probe", "", driver.WithTimeout(0))
	if got != 0 {
		t.Fatalf("WithTimeout(0): Timeout %v; want 0 (no bound)", got)
	}
	driver.Open(context.Background(), "timeout-probe", "", driver.WithTimeout(3*time.Second))
	if got != 3*time.Second {
		t.Fatalf("WithTimeout(3s): Timeout %v", got)
	}
}

func openPostgresBackend(t *testing.T, conn string, opts ...driver.Option) (driver.Store, *sqlBackend) {
	t.Helper()
	s, err := driver.Open(context.Background(), "postgres", conn, opts...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s, backend.BackendOf(s).(*sqlBackend)
}

// Every PostgreSQL statement is bounded on the server by the store's
// operation timeout, unless the connection string sets its own; libpq's
// keepalive parameters are accepted (pgx alone sends them to the server,
// which refuses the connection).
func TestPostgresServerSideBounds(t *testing.T) {
	ctx := context.Background()
	show := func(b *sqlBackend) string {
		var v string
		if err := b.db.QueryRowContext(ctx, "SHOW statement_timeout").Scan(&v); err != nil {
			t.Fatal(err)
		}
		return v
	}
	conn := testenv.Postgres(t)
	if _, b := openPostgresBackend(t, conn, driver.WithTimeout(3*time.Second)); show(b) != "3s" {
		t.Fatalf("statement_timeout %q with WithTimeout(3s); want 3s", show(b))
	}
	if _, b := openPostgresBackend(t, conn); show(b) != "2min" {
		t.Fatalf("statement_timeout %q by default; want 2min", show(b))
	}
	if _, b := openPostgresBackend(t, conn, driver.WithTimeout(0)); show(b) != "0" {
		t.Fatalf("statement_timeout %q with no bound; want the server's 0", show(b))
	}
	u, _ := url.Parse(conn)
	q := u.Query()
	q.Set("statement_timeout", "7000")
	q.Set("keepalives", "1")
	q.Set("keepalives_idle", "5")
	q.Set("keepalives_interval", "2")
	q.Set("keepalives_count", "2")
	u.RawQuery = q.Encode()
	s, b := openPostgresBackend(t, u.String(), driver.WithTimeout(3*time.Second))
	if show(b) != "7s" {
		t.Fatalf("statement_timeout %q; want the connection string's 7s", show(b))
	}
	if err := s.Namespace("storm").Create(relKey("app"), stormRelease("app", 1, 1)); err != nil {
		t.Fatal(err)
	}
	q.Set("keepalives_idle", "soon")
	u.RawQuery = q.Encode()
	if _, err := driver.Open(ctx, "postgres", u.String()); err == nil {
		t.Fatal("keepalives_idle=soon accepted")
	}
}

// A statement whose context is cancelled stops on the server too: the
// server gets a cancel request, instead of the client only abandoning the
// connection while the statement runs on.
func TestPostgresCancelStopsStatement(t *testing.T) {
	_, b := openPostgresBackend(t, testenv.Postgres(t))
	marker := testenv.UniqueName("helmstore_sleep_")
	active := func() int {
		var n int
		if err := b.db.QueryRowContext(context.Background(),
			"SELECT COUNT(*) FROM pg_stat_activity WHERE state = 'active' AND position($1 in query) > 0 AND pid <> pg_backend_pid()", marker).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	go func() {
		_, err := b.db.ExecContext(ctx, "SELECT pg_sleep(600) /* "+marker+" */")
		done <- err
	}()
	// Wait (bounded) for the statement to run, then cancel it.
	waitUntil(t, func() bool { return active() != 0 }, "the statement never showed in pg_stat_activity")
	cancel()
	if err := <-done; err == nil {
		t.Fatal("a cancelled pg_sleep(600) succeeded")
	}
	waitUntil(t, func() bool { return active() == 0 }, "the cancelled statement still runs on the server")
}

// A statement does not outlive a client that can no longer reach the
// server: the client gives up when its operation times out, its cancel
// request is lost on the way, and the server ends the statement itself
// (statement_timeout from the store's timeout). Before, the server ran
// such statements to their end (for the many-label query, many minutes).
func TestPostgresStatementOutlivesNoClient(t *testing.T) {
	conn := testenv.Postgres(t)
	_, direct := openPostgresBackend(t, conn)
	u, _ := url.Parse(conn)
	hole := testenv.NewBlackhole(t, u.Host)
	u.Host = hole.Addr
	_, b := openPostgresBackend(t, u.String(), driver.WithTimeout(2*time.Second))
	marker := testenv.UniqueName("helmstore_sleep_")
	active := func() int {
		var n int
		if err := direct.db.QueryRowContext(context.Background(),
			"SELECT COUNT(*) FROM pg_stat_activity WHERE state = 'active' AND position($1 in query) > 0", marker).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	done := make(chan error, 1)
	go func() {
		_, err := b.db.ExecContext(ctx, "SELECT pg_sleep(600) /* "+marker+" */")
		done <- err
	}()
	waitUntil(t, func() bool { return active() != 0 }, "the statement never showed in pg_stat_activity")
	hole.Hole()
	if err := <-done; err == nil {
		t.Fatal("pg_sleep(600) succeeded")
	}
	waitUntil(t, func() bool { return active() == 0 }, "the statement of a client that cannot reach the server still runs on it")
}

// A server that stops answering without closing the connection (a dead
// network path) fails the operation with a connection error once the
// store's timeout passes, never "not found" and never a hang.
func TestBlackholedServer(t *testing.T) {
	for _, c := range []struct {
		name    string
		conn    func(t *testing.T) string
		through func(conn, addr string) (string, string)
	}{
		{"postgres", func(t *testing.T) string { return testenv.Postgres(t) }, func(conn, addr string) (string, string) {
			u, _ := url.Parse(conn)
			target := u.Host
			u.Host = addr
			return u.String(), target
		}},
		{"mysql", func(t *testing.T) string { return testenv.MySQL(t) }, func(conn, addr string) (string, string) {
			re := regexp.MustCompile(`tcp\(([^)]*)\)`)
			return re.ReplaceAllString(conn, "tcp("+addr+")"), re.FindStringSubmatch(conn)[1]
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			conn := c.conn(t)
			_, target := c.through(conn, "")
			hole := testenv.NewBlackhole(t, target)
			conn, _ = c.through(conn, hole.Addr)
			s, err := driver.Open(context.Background(), c.name, conn, driver.WithTimeout(3*time.Second))
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			if err := s.Namespace("storm").Create(relKey("app"), stormRelease("app", 1, 1)); err != nil {
				t.Fatal(err)
			}
			hole.Hole()
			_, err = s.Namespace("storm").Get(relKey("app"))
			if err == nil || errors.Is(err, driver.ErrReleaseNotFound) {
				t.Fatalf("get from a blackholed server: %v; want a connection error", err)
			}
			err = s.Namespace("storm").Create(relKey("other"), stormRelease("other", 1, 1))
			if err == nil || errors.Is(err, driver.ErrReleaseExists) {
				t.Fatalf("create on a blackholed server: %v; want a connection error", err)
			}
		})
	}
}

// waitUntil polls cond (bounded: 30 s) and fails t with msg if it never holds.
func waitUntil(t *testing.T, cond func() bool, msg string) {
	t.Helper()
	for i := 0; !cond(); i++ {
		if i == 600 {
			t.Fatal(msg)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
