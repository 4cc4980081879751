package sqlbackend_test

import (
	"context"
	"errors"
	"net/url"
	"regexp"
	"testing"
	"time"

	"github.com/helmstore/helmstore/helm3"
	"github.com/helmstore/helmstore/internal/testing/sqltest"
	"github.com/helmstore/helmstore/internal/testing/testenv"
	"github.com/helmstore/helmstore/internal/testing/testenv/sqlenv"
)

// A server that stops answering without closing the connection (a dead
// network path) fails the operation with a connection error once the
// store's timeout passes, never "not found" and never a hang.
func TestBlackholedServer(t *testing.T) {
	for _, c := range []struct {
		name    string
		conn    func(t *testing.T) string
		through func(conn, addr string) (string, string)
	}{
		{"postgres", func(t *testing.T) string { return sqlenv.Postgres(t) }, func(conn, addr string) (string, string) {
			u, _ := url.Parse(conn)
			target := u.Host
			u.Host = addr
			return u.String(), target
		}},
		{"mysql", func(t *testing.T) string { return sqlenv.MySQL(t) }, func(conn, addr string) (string, string) {
			re := regexp.MustCompile(`tcp\(([^)]*)\)`)
			return re.ReplaceAllString(conn, "tcp("+addr+")"), re.FindStringSubmatch(conn)[1]
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			conn := c.conn(t)
			_, target := c.through(conn, "")
			hole := testenv.NewBlackhole(t, target)
			conn, _ = c.through(conn, hole.Addr)
			s, err := helm3.Open(context.Background(), c.name, conn, helm3.WithTimeout(3*time.Second))
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			if err := s.Namespace("storm").Create(sqltest.Key("app", 1), sqltest.SharedRelease("app", 1, 1)); err != nil {
				t.Fatal(err)
			}
			hole.Hole()
			_, err = s.Namespace("storm").Get(sqltest.Key("app", 1))
			if err == nil || errors.Is(err, helm3.ErrReleaseNotFound) {
				t.Fatalf("get from a blackholed server: %v; want a connection error", err)
			}
			err = s.Namespace("storm").Create(sqltest.Key("other", 1), sqltest.SharedRelease("other", 1, 1))
			if err == nil || errors.Is(err, helm3.ErrReleaseExists) {
				t.Fatalf("create on a blackholed server: %v; want a connection error", err)
			}
		})
	}
}
