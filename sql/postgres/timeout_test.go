package postgres

import (
	"context"
	"net/url"
	"testing"
	"time"

	"github.com/helmstore/helmstore/helm3"
	"github.com/helmstore/helmstore/internal/testing/sqltest"
	"github.com/helmstore/helmstore/internal/testing/testenv"
	"github.com/helmstore/helmstore/internal/testing/testenv/sqlenv"
)

// openBackend opens a postgres store and returns it with its backend.
func openBackend(t *testing.T, conn string, opts ...helm3.Option) (helm3.Store, sqltest.Backend) {
	t.Helper()
	s := sqltest.Open(t, "postgres", conn, opts...)
	t.Cleanup(func() { s.Close() })
	return s, sqltest.BackendOf(t, s)
}

// Every PostgreSQL statement is bounded on the server by the store's
// operation timeout, unless the connection string sets its own; libpq's
// keepalive parameters are accepted (pgx alone sends them to the server,
// which refuses the connection).
func TestPostgresServerSideBounds(t *testing.T) {
	ctx := context.Background()
	show := func(b sqltest.Backend) string {
		var v string
		if err := b.DB().QueryRowContext(ctx, "SHOW statement_timeout").Scan(&v); err != nil {
			t.Fatal(err)
		}
		return v
	}
	conn := sqlenv.Postgres(t)
	if _, b := openBackend(t, conn, helm3.WithTimeout(3*time.Second)); show(b) != "3s" {
		t.Fatalf("statement_timeout %q with WithTimeout(3s); want 3s", show(b))
	}
	if _, b := openBackend(t, conn); show(b) != "2min" {
		t.Fatalf("statement_timeout %q by default; want 2min", show(b))
	}
	if _, b := openBackend(t, conn, helm3.WithTimeout(0)); show(b) != "0" {
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
	s, b := openBackend(t, u.String(), helm3.WithTimeout(3*time.Second))
	if show(b) != "7s" {
		t.Fatalf("statement_timeout %q; want the connection string's 7s", show(b))
	}
	if err := s.Namespace("storm").Create(sqltest.Key("app", 1), sqltest.SharedRelease("app", 1, 1)); err != nil {
		t.Fatal(err)
	}
	q.Set("keepalives_idle", "soon")
	u.RawQuery = q.Encode()
	if _, err := helm3.Open(ctx, "postgres", u.String()); err == nil {
		t.Fatal("keepalives_idle=soon accepted")
	}
}

// A statement whose context is cancelled stops on the server too: the
// server gets a cancel request, instead of the client only abandoning the
// connection while the statement runs on.
func TestPostgresCancelStopsStatement(t *testing.T) {
	_, b := openBackend(t, sqlenv.Postgres(t))
	marker := testenv.UniqueName("helmstore_sleep_")
	active := func() int {
		var n int
		if err := b.DB().QueryRowContext(context.Background(),
			"SELECT COUNT(*) FROM pg_stat_activity WHERE state = 'active' AND position($1 in query) > 0 AND pid <> pg_backend_pid()", marker).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	go func() {
		_, err := b.DB().ExecContext(ctx, "SELECT pg_sleep(600) /* "+marker+" */")
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
	conn := sqlenv.Postgres(t)
	_, direct := openBackend(t, conn)
	u, _ := url.Parse(conn)
	hole := testenv.NewBlackhole(t, u.Host)
	u.Host = hole.Addr
	_, b := openBackend(t, u.String(), helm3.WithTimeout(2*time.Second))
	marker := testenv.UniqueName("helmstore_sleep_")
	active := func() int {
		var n int
		if err := direct.DB().QueryRowContext(context.Background(),
			"SELECT COUNT(*) FROM pg_stat_activity WHERE state = 'active' AND position($1 in query) > 0", marker).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	done := make(chan error, 1)
	go func() {
		_, err := b.DB().ExecContext(ctx, "SELECT pg_sleep(600) /* "+marker+" */")
		done <- err
	}()
	waitUntil(t, func() bool { return active() != 0 }, "the statement never showed in pg_stat_activity")
	hole.Hole()
	if err := <-done; err == nil {
		t.Fatal("pg_sleep(600) succeeded")
	}
	waitUntil(t, func() bool { return active() == 0 }, "the statement of a client that cannot reach the server still runs on it")
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
