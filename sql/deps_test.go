package sql_test

import (
	"os/exec"
	"slices"
	"strings"
	"testing"

	"github.com/helmstore/helmstore/driver"

	_ "github.com/helmstore/helmstore/sql"
)

// The database drivers, by the package whose import links each.
var databaseDrivers = map[string]string{
	"postgres": "github.com/jackc/pgx/v5",
	"mysql":    "github.com/go-sql-driver/mysql",
	"sqlite":   "modernc.org/sqlite",
}

// A program that imports one dialect links that dialect's database driver
// and neither of the others; one that imports package sql links all three,
// and one that imports none links none (so a package missing from the list
// is missing because it is not linked, not because the list is wrong).
func TestDialectsLinkAlone(t *testing.T) {
	for _, probe := range []string{"none", "postgres", "mysql", "sqlite", "all"} {
		t.Run(probe, func(t *testing.T) {
			out, err := exec.Command("go", "list", "-deps", "../internal/testing/linkprobe/"+probe).CombinedOutput()
			if err != nil {
				t.Fatalf("go list -deps: %v\n%s", err, out)
			}
			deps := strings.Fields(string(out))
			for dialect, pkg := range databaseDrivers {
				want := probe == dialect || probe == "all"
				if got := slices.Contains(deps, pkg); got != want {
					t.Errorf("a program importing %s links %s: %v, want %v", probe, pkg, got, want)
				}
			}
		})
	}
}

// Package sql registers every SQL name, as before the dialects had packages
// of their own.
func TestUmbrellaRegistersEveryDialect(t *testing.T) {
	for dialect := range databaseDrivers {
		if !slices.Contains(driver.Drivers(), dialect) {
			t.Errorf("importing package sql does not register %q: registered %v", dialect, driver.Drivers())
		}
	}
}
