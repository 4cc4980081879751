// Package registry is how a face opens a store by its HELM_DRIVER name:
// the registered backends (driver.Register), Helm's own names, which pass
// through to Helm, the error for a name nobody registered, a backend's
// connection string from the environment, encryption at rest as package
// encryption registers it, and Redact, which takes the secrets out of a
// connection string and of the errors of its client (redact.go).
// Applications use helm3 or helm4, which re-export what they need of it.
package registry

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/helmstore/helmstore/driver"
)

// lookup and drivers are driver.Lookup and driver.Drivers (tests put
// others in their place).
var (
	lookup  = driver.Lookup
	drivers = driver.Drivers
)

// helmDrivers are the HELM_DRIVER names Helm itself understands.
var helmDrivers = []string{"secret", "secrets", "configmap", "configmaps", "memory", "sql"}

func isHelmDriver(name string) bool {
	if name == "" {
		return true
	}
	for _, n := range helmDrivers {
		if n == name {
			return true
		}
	}
	return false
}

// knownDrivers are helmstore's own driver names and the package whose import
// registers each (for the SQL dialects, the dialect's own package; package
// sql registers all three), for the hint in the error for a name nobody
// registered. this package cannot import the backends (they import it), so
// the table is kept by hand; examples/helm3driver's test, which imports every
// backend, checks that it names nothing they do not register.
var knownDrivers = map[string]string{
	"postgres": "github.com/helmstore/helmstore/sql/postgres",
	"mysql":    "github.com/helmstore/helmstore/sql/mysql",
	"sqlite":   "github.com/helmstore/helmstore/sql/sqlite",
	"crsplit":  "github.com/helmstore/helmstore/crsplit",
	"redis":    "github.com/helmstore/helmstore/redis",
	"cosmos":   "github.com/helmstore/helmstore/cosmos",
	"memstore": "github.com/helmstore/helmstore/memstore",
}

// ErrUnknownDriver is wrapped by the error for a driver name that Open (or
// Init) cannot open: one nobody registered, or, for Open, one of Helm's own.
var ErrUnknownDriver = errors.New("unknown storage driver")

// driverNameError is the error for a driver name that cannot be opened. Its
// text is its own (a Helm name given to Open is not "unknown"); errors.Is
// matches ErrUnknownDriver.
type driverNameError struct{ msg string }

func (e *driverNameError) Error() string { return e.msg }
func (e *driverNameError) Unwrap() error { return ErrUnknownDriver }

// unknownDriver explains why name cannot be opened and lists what can:
// for Open (viaInit false) the registered backends only, for Init Helm's
// names too. A known helmstore name that is not registered gets the import
// that registers it; the other known names that are not registered are
// listed after, names only, so that the message stays one short line.
func unknownDriver(name string, viaInit bool) error {
	registered := drivers()
	others := unregistered(name)
	var b strings.Builder
	b.WriteString("helmstore: ")
	sep := ": " // between what is wrong and what can be opened
	switch {
	case !viaInit && name == "":
		b.WriteString("no storage driver name given (Helm's default, secret, goes through Init)")
	case !viaInit && isHelmDriver(name):
		fmt.Fprintf(&b, "%q is Helm's own storage driver, which Open cannot open: Helm's names (%s) go through Init",
			name, strings.Join(helmDrivers, ", "))
		sep = "; "
	default:
		fmt.Fprintf(&b, "%s %q", ErrUnknownDriver, name)
		if pkg, known := knownDrivers[name]; known {
			fmt.Fprintf(&b, ": import _ %q registers it", pkg)
			sep = "; "
		} else if s := suggest(name, viaInit, registered); s != "" {
			fmt.Fprintf(&b, " (did you mean %q?)", s)
		}
	}
	b.WriteString(sep)
	if viaInit {
		fmt.Fprintf(&b, "valid names are Helm's %s", strings.Join(helmDrivers, ", "))
		if len(registered) > 0 {
			fmt.Fprintf(&b, " and the registered backends %s", strings.Join(registered, ", "))
		} else {
			b.WriteString(" (no helmstore backend is registered)")
		}
	} else if len(registered) > 0 {
		fmt.Fprintf(&b, "registered backends are %s", strings.Join(registered, ", "))
	} else {
		b.WriteString("no helmstore backend is registered")
	}
	if len(others) > 0 {
		fmt.Fprintf(&b, "; not imported: %s", strings.Join(others, ", "))
	}
	return &driverNameError{msg: b.String()}
}

// unregistered returns, sorted, helmstore's known driver names that are not
// registered, but for except.
func unregistered(except string) []string {
	var out []string
	for n := range knownDrivers {
		if _, ok := lookup(n); !ok && n != except {
			out = append(out, n)
		}
	}
	sort.Strings(out)
	return out
}

// suggest returns the openable name closest to a mistyped one, or "".
func suggest(name string, viaInit bool, registered []string) string {
	cands := append([]string{}, registered...)
	for n := range knownDrivers {
		cands = append(cands, n)
	}
	if viaInit {
		cands = append(cands, helmDrivers...)
	}
	sort.Strings(cands)
	best, bestD := "", 3 // at most two edits away
	for _, c := range cands {
		if d := editDistance(strings.ToLower(name), c); d < bestD && d < len(c)/2+1 {
			best, bestD = c, d
		}
	}
	return best
}

// editDistance is the Levenshtein distance between a and b.
func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur := make([]int, len(b)+1)
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev = cur
	}
	return prev[len(b)]
}

// IsHelmDriver reports whether name is one of Helm's own HELM_DRIVER names
// (secret, secrets, configmap, configmaps, memory, sql, or "" for Helm's
// default), which a face's Init passes to Helm.
func IsHelmDriver(name string) bool { return isHelmDriver(name) }

// CheckDriver returns nil if name can be given to a face's Init (one of
// Helm's names, or a registered backend), and otherwise an error wrapping
// ErrUnknownDriver that says what can be, and which import registers a
// known backend.
func CheckDriver(name string) error {
	if isHelmDriver(name) {
		return nil
	}
	if _, ok := lookup(name); !ok {
		return unknownDriver(name, true)
	}
	return nil
}

// Open opens the backend registered as cfg.Name with cfg. It opens
// helmstore's backends only: Helm's own driver names go through a face's
// Init. An opener's error is returned as an *OpenError, which never
// contains the connection string's password.
func Open(ctx context.Context, cfg *driver.Config) (driver.Backend, error) {
	open, ok := lookup(cfg.Name)
	if !ok || isHelmDriver(cfg.Name) {
		return nil, unknownDriver(cfg.Name, false)
	}
	b, err := open(ctx, cfg)
	if err == nil && b == nil {
		err = errors.New("the backend's opener returned no backend and no error")
	}
	if err != nil {
		return nil, &OpenError{Driver: cfg.Name, Conn: Redact(cfg.ConnectionString), Err: scrub(err, cfg.ConnectionString)}
	}
	return b, nil
}

// OpenError reports a store that could not be opened. Conn is the connection
// string with its password replaced.
type OpenError struct {
	Driver string
	Conn   string
	Err    error
}

// Error names the driver, with the connection string redacted, and the cause.
func (e *OpenError) Error() string {
	if e.Conn == "" {
		return fmt.Sprintf("helmstore: open %s: %v", e.Driver, e.Err)
	}
	return fmt.Sprintf("helmstore: open %s (%s): %v", e.Driver, e.Conn, e.Err)
}

// Unwrap returns the cause.
func (e *OpenError) Unwrap() error { return e.Err }
