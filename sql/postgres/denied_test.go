package postgres

import (
	"context"
	"errors"
	"testing"

	"helm.sh/helm/v3/pkg/release"

	"github.com/helmstore/helmstore/helm3"
	"github.com/helmstore/helmstore/internal/testing/sqltest"
	"github.com/helmstore/helmstore/internal/testing/testenv/sqlenv"
)

// A role that may use the store's schema but holds no privilege on its
// tables is refused with driver.ErrAccessDenied (42501), not ErrUnavailable
// or "not found": at Open (the migration table), or, once it may read that
// table, at each operation on the store's own tables.
func TestPostgresPrivilegeDenied(t *testing.T) {
	conn := sqlenv.Postgres(t)
	s := sqltest.Open(t, "postgres", conn)
	defer s.Close()
	if err := s.Create("sh.helm.release.v1.app.v1", sqltest.Release("app", "default", 1)); err != nil {
		t.Fatal(err)
	}
	admin, schema, role, u := sqltest.PostgresRole(t, conn, "hs_role_")
	if _, err := admin.Exec("GRANT USAGE ON SCHEMA " + schema + " TO " + role); err != nil {
		t.Fatal(err)
	}
	denied := func(what string, err error) {
		t.Helper()
		if !errors.Is(err, helm3.ErrAccessDenied) || errors.Is(err, helm3.ErrUnavailable) || errors.Is(err, helm3.ErrReleaseNotFound) {
			t.Errorf("%s as a role without privileges: %v; want helm3.ErrAccessDenied only", what, err)
		}
	}
	_, err := helm3.Open(context.Background(), "postgres", u.String())
	denied("Open", err)

	// It may read the migration table now, not the store's tables.
	if _, err := admin.Exec("GRANT SELECT ON ALL TABLES IN SCHEMA " + schema + " TO " + role + "; REVOKE SELECT ON " + schema + ".helmstore_releases, " + schema + ".helmstore_parts FROM " + role); err != nil {
		t.Fatal(err)
	}
	d, err := helm3.Open(context.Background(), "postgres", u.String())
	if err != nil {
		t.Fatalf("Open with the migration table readable: %v", err)
	}
	defer d.Close()
	_, err = d.Get("sh.helm.release.v1.app.v1")
	denied("Get", err)
	_, err = d.List(func(*release.Release) bool { return true })
	denied("List", err)
	denied("Create", d.Create("sh.helm.release.v1.web.v1", sqltest.Release("web", "default", 1)))
}
