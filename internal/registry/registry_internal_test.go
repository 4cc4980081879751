package registry

import (
	"context"
	"errors"
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/helmstore/helmstore/driver"
)

// withRegistered makes names the only registered backends for the test.
func withRegistered(t *testing.T, names ...string) {
	m := map[string]driver.Opener{}
	for _, n := range names {
		m[n] = func(context.Context, *driver.Config) (driver.Backend, error) {
			return nil, errors.New("not for opening")
		}
	}
	savedLookup, savedDrivers := lookup, drivers
	lookup = func(name string) (driver.Opener, bool) { o, ok := m[name]; return o, ok }
	drivers = func() []string { return slices.Sorted(maps.Keys(m)) }
	t.Cleanup(func() { lookup, drivers = savedLookup, savedDrivers })
}

// open is Open of name with no connection string.
func open(name string) error {
	_, err := Open(context.Background(), &driver.Config{Name: name})
	return err
}

func TestOpenErrorMessages(t *testing.T) {
	withRegistered(t, "mysql", "postgres", "sqlite") // as after importing package sql only
	const others = "; not imported: cosmos, crsplit, memstore, redis"
	for _, tc := range []struct{ name, want string }{
		{"memory", `helmstore: "memory" is Helm's own storage driver, which Open cannot open: Helm's names (secret, secrets, configmap, configmaps, memory, sql) go through Init; registered backends are mysql, postgres, sqlite` + others},
		{"sql", `helmstore: "sql" is Helm's own storage driver, which Open cannot open: Helm's names (secret, secrets, configmap, configmaps, memory, sql) go through Init; registered backends are mysql, postgres, sqlite` + others},
		{"", `helmstore: no storage driver name given (Helm's default, secret, goes through Init): registered backends are mysql, postgres, sqlite` + others},
		{"crsplit", `helmstore: unknown storage driver "crsplit": import _ "github.com/helmstore/helmstore/crsplit" registers it; registered backends are mysql, postgres, sqlite; not imported: cosmos, memstore, redis`},
		{"redis", `helmstore: unknown storage driver "redis": import _ "github.com/helmstore/helmstore/redis" registers it; registered backends are mysql, postgres, sqlite; not imported: cosmos, crsplit, memstore`},
		{"memstore", `helmstore: unknown storage driver "memstore": import _ "github.com/helmstore/helmstore/memstore" registers it; registered backends are mysql, postgres, sqlite; not imported: cosmos, crsplit, redis`},
		{"postgress", `helmstore: unknown storage driver "postgress" (did you mean "postgres"?): registered backends are mysql, postgres, sqlite` + others},
		{"crsplt", `helmstore: unknown storage driver "crsplt" (did you mean "crsplit"?): registered backends are mysql, postgres, sqlite` + others},
		{"cosmo", `helmstore: unknown storage driver "cosmo" (did you mean "cosmos"?): registered backends are mysql, postgres, sqlite` + others},
		{"etcd", `helmstore: unknown storage driver "etcd": registered backends are mysql, postgres, sqlite` + others},
	} {
		err := open(tc.name)
		if err == nil || err.Error() != tc.want {
			t.Errorf("Open(%q):\n got %v\nwant %s", tc.name, err, tc.want)
		}
		if !errors.Is(err, ErrUnknownDriver) {
			t.Errorf("Open(%q): %v is not ErrUnknownDriver", tc.name, err)
		}
	}
}

func TestOpenErrorWithNothingRegistered(t *testing.T) {
	withRegistered(t)
	err := open("postgres")
	want := `helmstore: unknown storage driver "postgres": import _ "github.com/helmstore/helmstore/sql/postgres" registers it; no helmstore backend is registered; not imported: cosmos, crsplit, memstore, mysql, redis, sqlite`
	if err == nil || err.Error() != want {
		t.Fatalf("got  %v\nwant %s", err, want)
	}
}

// Every known name's hint names its package, and the message stays short
// however many backends there are: one import path, the others' names.
func TestUnknownDriverHintIsShort(t *testing.T) {
	withRegistered(t)
	for name, pkg := range knownDrivers {
		if !strings.HasPrefix(pkg, "github.com/helmstore/helmstore/") {
			t.Errorf("%s: package %q", name, pkg)
		}
		err := open(name)
		if n := strings.Count(err.Error(), "import _"); n != 1 {
			t.Errorf("Open(%q): %d import hints in %q; want 1", name, n, err)
		}
		if len(err.Error())-len(pkg) > 180 {
			t.Errorf("Open(%q): a %d-byte message: %s", name, len(err.Error()), err)
		}
	}
}

func TestInitErrorMessages(t *testing.T) {
	withRegistered(t, "crsplit")
	const others = "; not imported: cosmos, memstore, mysql, postgres, redis, sqlite"
	for _, tc := range []struct{ name, want string }{
		{"mongo", `helmstore: unknown storage driver "mongo": valid names are Helm's secret, secrets, configmap, configmaps, memory, sql and the registered backends crsplit` + others},
		{"configmp", `helmstore: unknown storage driver "configmp" (did you mean "configmap"?): valid names are Helm's secret, secrets, configmap, configmaps, memory, sql and the registered backends crsplit` + others},
		{"sqlite", `helmstore: unknown storage driver "sqlite": import _ "github.com/helmstore/helmstore/sql/sqlite" registers it; valid names are Helm's secret, secrets, configmap, configmaps, memory, sql and the registered backends crsplit; not imported: cosmos, memstore, mysql, postgres, redis`},
	} {
		err := CheckDriver(tc.name)
		if err == nil || err.Error() != tc.want {
			t.Errorf("Init(%q):\n got %v\nwant %s", tc.name, err, tc.want)
		}
		if !errors.Is(err, ErrUnknownDriver) {
			t.Errorf("Init(%q): %v is not ErrUnknownDriver", tc.name, err)
		}
	}
}
