package postgres

import (
	"context"
	"net/url"
	"strings"
	"testing"

	"github.com/helmstore/helmstore/helm3"
	"github.com/helmstore/helmstore/internal/testing/testenv/sqlenv"
)

// A search_path naming no existing schema is refused at Open with an error
// that says so, not a driver's "converting NULL to string".
func TestPostgresMissingSchema(t *testing.T) {
	u, err := url.Parse(sqlenv.PostgresServer(t))
	if err != nil {
		t.Fatal(err)
	}
	q := u.Query()
	q.Set("search_path", "hs_no_such_schema")
	u.RawQuery = q.Encode()
	s, err := helm3.Open(context.Background(), "postgres", u.String())
	if err == nil {
		s.Close()
		t.Fatal("Open with a search_path of no existing schema succeeded")
	}
	for _, want := range []string{"hs_no_such_schema", "create it first"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not say %q", err, want)
		}
	}
}
