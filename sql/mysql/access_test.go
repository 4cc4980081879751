package mysql

import (
	"context"
	"database/sql"
	"errors"
	"testing"

	gomysql "github.com/go-sql-driver/mysql"
	"helm.sh/helm/v3/pkg/release"

	"github.com/helmstore/helmstore/driver"
	"github.com/helmstore/helmstore/helm3"
	"github.com/helmstore/helmstore/internal/sqltest"
	"github.com/helmstore/helmstore/internal/testenv"
	"github.com/helmstore/helmstore/internal/testenv/sqlenv"
)

// An account given NamespaceAccess for team-a reads, lists (latest
// revisions too, which the store reads without its index hints there) and
// writes team-a's releases through a store opened on the views, sees no
// release of team-b (nor any across namespaces but its own), and is refused
// a write there; the owner still sees both namespaces whole.
func TestNamespaceAccess(t *testing.T) {
	ctx := context.Background()
	dsn := sqlenv.MySQL(t)
	owner := sqltest.Open(t, Name, dsn)
	defer owner.Close()
	if err := owner.Namespace("team-b").Create("sh.helm.release.v1.db.v1", sqltest.Release("db", "team-b", 1)); err != nil {
		t.Fatal(err)
	}
	cfg, err := gomysql.ParseDSN(dsn)
	if err != nil {
		t.Fatal(err)
	}
	admin, err := sql.Open("mysql", sqlenv.MySQLServer(t))
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close()
	user, views := testenv.UniqueName("hs_team_a_"), cfg.DBName+"_team_a"
	if _, err := admin.Exec("CREATE USER '" + user + "'@'%'"); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		admin.Exec("DROP USER '" + user + "'@'%'")
		admin.Exec("DROP DATABASE IF EXISTS " + views)
	})
	for range 2 { // twice: running them again is harmless
		for _, q := range NamespaceAccess(cfg.DBName, views, user, "team-a") {
			if _, err := admin.Exec(q); err != nil {
				t.Fatalf("%s: %v", q, err)
			}
		}
	}
	cfg.User, cfg.DBName = user, views
	s, err := helm3.Open(ctx, Name, cfg.FormatDSN())
	if err != nil {
		t.Fatalf("Open as the namespace's account: %v", err)
	}
	defer s.Close()
	a := s.Namespace("team-a")
	for v := 1; v <= 2; v++ {
		if err := a.Create(driver.MakeKey("app", v), sqltest.Release("app", "team-a", v)); err != nil {
			t.Fatalf("create in its own namespace: %v", err)
		}
	}
	if err := a.Update(driver.MakeKey("app", 2), sqltest.Release("app", "team-a", 2)); err != nil {
		t.Fatalf("update in its own namespace: %v", err)
	}
	if r, err := a.Get(driver.MakeKey("app", 2)); err != nil || r.Version != 2 {
		t.Fatalf("get in its own namespace: %v", err)
	}
	if p, err := s.Namespace("").Summaries(ctx, helm3.SummaryQuery{}); err != nil || len(p.Summaries) != 1 || p.Summaries[0].Revision != 2 {
		t.Fatalf("latest revisions across namespaces as the account: %+v, %v; want team-a's app at 2", p.Summaries, err)
	}
	if _, err := a.Delete(driver.MakeKey("app", 1)); err != nil {
		t.Fatalf("delete in its own namespace: %v", err)
	}
	all, err := s.Namespace("").List(func(*release.Release) bool { return true })
	if err != nil || len(all) != 1 || all[0].Namespace != "team-a" {
		t.Errorf("list across namespaces as the account: %d releases, %v; want team-a's one", len(all), err)
	}
	b := s.Namespace("team-b")
	if _, err := b.Get("sh.helm.release.v1.db.v1"); !errors.Is(err, helm3.ErrReleaseNotFound) {
		t.Errorf("get in another namespace: %v; want not found (its rows are invisible)", err)
	}
	if err := b.Create("sh.helm.release.v1.x.v1", sqltest.Release("x", "team-b", 1)); !errors.Is(err, helm3.ErrAccessDenied) {
		t.Errorf("create in another namespace: %v; want ErrAccessDenied", err)
	}
	if err := b.Update("sh.helm.release.v1.db.v1", sqltest.Release("db", "team-b", 1)); err == nil {
		t.Error("update in another namespace succeeded")
	}
	if _, err := b.Delete("sh.helm.release.v1.db.v1"); err == nil {
		t.Error("delete in another namespace succeeded")
	}
	if r, err := owner.Namespace("team-b").Get("sh.helm.release.v1.db.v1"); err != nil || r.Name != "db" {
		t.Errorf("the owner reads team-b's release: %v", err)
	}
	if r, err := owner.Namespace("team-a").Get(driver.MakeKey("app", 2)); err != nil || r.Name != "app" {
		t.Errorf("the owner reads what the account wrote: %v", err)
	}
	if rs, err := owner.Namespace("").List(func(*release.Release) bool { return true }); err != nil || len(rs) != 2 {
		t.Errorf("the owner lists %d releases, %v; want 2", len(rs), err)
	}
}
