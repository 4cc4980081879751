package sqlbackend_test

import (
	"context"
	stdsql "database/sql"
	"errors"
	"fmt"
	"net"
	"net/url"
	"testing"

	gomysql "github.com/go-sql-driver/mysql"
	"helm.sh/helm/v3/pkg/release"

	"github.com/helmstore/helmstore/helm3"
	"github.com/helmstore/helmstore/internal/testing/sqltest"
	"github.com/helmstore/helmstore/internal/testing/testenv"
	"github.com/helmstore/helmstore/internal/testing/testenv/sqlenv"
)

// unusedPort returns a local TCP address nothing listens on.
func unusedPort(t *testing.T) string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	return addr
}

// Opening a store on a port nobody listens on fails with
// driver.ErrUnavailable, not "not found" and not a bare driver error.
func TestOpenClosedPortIsUnavailable(t *testing.T) {
	for name, conn := range map[string]func(addr string) string{
		"postgres": func(addr string) string {
			return "postgres://postgres@" + addr + "/test?sslmode=disable&connect_timeout=5"
		},
		"mysql": func(addr string) string { return "root@tcp(" + addr + ")/test?timeout=5s" },
	} {
		t.Run(name, func(t *testing.T) {
			_, err := helm3.Open(context.Background(), name, conn(unusedPort(t)))
			if err == nil {
				t.Fatal("opened a store on a closed port")
			}
			if !errors.Is(err, helm3.ErrUnavailable) || errors.Is(err, helm3.ErrReleaseNotFound) {
				t.Fatalf("open on a closed port: %v; want helm3.ErrUnavailable", err)
			}
		})
	}
}

// A store whose server connections are all killed (pg_terminate_backend,
// KILL) answers every later call either with a result, over a new
// connection, or with driver.ErrUnavailable; never "not found" or
// "exists"; and it works again once it has reconnected.
func TestServerKillsSessions(t *testing.T) {
	for _, c := range []struct {
		name string
		// conn returns a connection string to a fresh database and a
		// function that kills every session the store has open on it.
		conn func(t *testing.T) (string, func() int)
	}{
		{"postgres", func(t *testing.T) (string, func() int) {
			u, _ := url.Parse(sqlenv.Postgres(t))
			app := testenv.UniqueName("hs_kill_")
			q := u.Query()
			q.Set("application_name", app)
			u.RawQuery = q.Encode()
			return u.String(), func() int {
				return killAll(t, "pgx", sqlenv.PostgresServer(t), "SELECT pid FROM pg_stat_activity WHERE application_name = $1", app,
					func(id int64) string { return fmt.Sprintf("SELECT pg_terminate_backend(%d)", id) })
			}
		}},
		{"mysql", func(t *testing.T) (string, func() int) {
			conn := sqlenv.MySQL(t)
			cfg, err := gomysql.ParseDSN(conn)
			if err != nil {
				t.Fatal(err)
			}
			return conn, func() int {
				return killAll(t, "mysql", sqlenv.MySQLServer(t), "SELECT ID FROM information_schema.PROCESSLIST WHERE DB = ? AND ID <> CONNECTION_ID()", cfg.DBName,
					func(id int64) string { return fmt.Sprintf("KILL %d", id) })
			}
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			conn, kill := c.conn(t)
			s := sqltest.Open(t, c.name, conn)
			defer s.Close()
			for v := 1; v <= 3; v++ {
				if err := s.Create(sqltest.Key("app", v), sqltest.Release("app", "default", v)); err != nil {
					t.Fatal(err)
				}
			}
			// Several connections in the pool, all idle.
			if _, err := s.List(func(*release.Release) bool { return true }); err != nil {
				t.Fatal(err)
			}
			if n := kill(); n == 0 {
				t.Fatal("the store had no session to kill")
			}
			// Every call: a result or ErrUnavailable. database/sql drops a
			// connection that failed, so the calls reconnect in the end.
			var ok, unavailable int
			check := func(op string, err error) {
				switch {
				case err == nil:
					ok++
				case errors.Is(err, helm3.ErrUnavailable) && !errors.Is(err, helm3.ErrReleaseNotFound) && !errors.Is(err, helm3.ErrReleaseExists):
					unavailable++
					t.Logf("%s: %v", op, err)
				default:
					t.Fatalf("%s after the server killed the store's sessions: %v; want success or helm3.ErrUnavailable", op, err)
				}
			}
			for i := 0; i < 20; i++ {
				_, err := s.Get(sqltest.Key("app", 1))
				check("get", err)
				_, err = s.Query(map[string]string{"name": "app", "version": "2"})
				check("query", err)
				check("update", s.Update(sqltest.Key("app", 3), sqltest.Release("app", "default", 3)))
			}
			t.Logf("%d calls answered, %d unavailable", ok, unavailable)
			if _, err := s.Get(sqltest.Key("app", 2)); err != nil {
				t.Fatalf("after reconnecting: %v", err)
			}
			if err := s.Create(sqltest.Key("app", 4), sqltest.Release("app", "default", 4)); err != nil {
				t.Fatalf("after reconnecting: %v", err)
			}
		})
	}
}

// killAll runs list (with arg) on a connection of its own to the server at
// base and kill for each id it returns; it returns how many it killed.
func killAll(t *testing.T, driverName, base, list string, arg any, kill func(id int64) string) int {
	t.Helper()
	db, err := stdsql.Open(driverName, base)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	rows, err := db.Query(list, arg)
	if err != nil {
		t.Fatal(err)
	}
	var ids []int64
	for rows.Next() {
		var id int64
		if err := rows.Scan(&id); err != nil {
			t.Fatal(err)
		}
		ids = append(ids, id)
	}
	rows.Close()
	for _, id := range ids {
		if _, err := db.Exec(kill(id)); err != nil {
			t.Fatalf("%s: %v", kill(id), err)
		}
	}
	return len(ids)
}
