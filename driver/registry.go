package driver

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync"
)

// Opener opens a Store from a Config. Backends pass one to Register.
type Opener func(ctx context.Context, cfg *Config) (Store, error)

var (
	regMu   sync.RWMutex
	openers = map[string]Opener{}
)

// Register makes a backend available under name. Backends call it from init;
// registering a name twice panics, as in database/sql.
func Register(name string, open Opener) {
	regMu.Lock()
	defer regMu.Unlock()
	if open == nil {
		panic("helmstore: Register opener is nil")
	}
	if _, dup := openers[name]; dup || isHelmDriver(name) {
		panic("helmstore: Register called twice for driver " + name)
	}
	openers[name] = open
}

// Drivers returns the names of the registered helmstore backends, sorted.
func Drivers() []string {
	regMu.RLock()
	defer regMu.RUnlock()
	out := make([]string, 0, len(openers))
	for n := range openers {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

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

// ErrUnknownDriver is wrapped by the error for a driver name nobody registered.
var ErrUnknownDriver = errors.New("unknown storage driver")

func unknownDriver(name string) error {
	valid := append(append([]string{}, helmDrivers...), Drivers()...)
	return fmt.Errorf("helmstore: %w %q: valid names are %s (import a backend package, e.g. github.com/helmstore/helmstore/sql, to register its names)",
		ErrUnknownDriver, name, strings.Join(valid, ", "))
}

// Open opens the backend registered as name with the given connection string.
// The returned Store is scoped to DefaultNamespace; use Namespace for others.
// Errors never contain the connection string's password.
func Open(ctx context.Context, name, connectionString string, opts ...Option) (Store, error) {
	regMu.RLock()
	open, ok := openers[name]
	regMu.RUnlock()
	if !ok {
		return nil, unknownDriver(name)
	}
	cfg := newConfig(name, connectionString, opts)
	s, err := open(ctx, cfg)
	if err != nil {
		return nil, &OpenError{Driver: name, Conn: Redact(connectionString), Err: scrub(err, connectionString)}
	}
	return s, nil
}

// OpenError reports a store that could not be opened. Conn is the connection
// string with its password replaced.
type OpenError struct {
	Driver string
	Conn   string
	Err    error
}

func (e *OpenError) Error() string {
	if e.Conn == "" {
		return fmt.Sprintf("helmstore: open %s: %v", e.Driver, e.Err)
	}
	return fmt.Sprintf("helmstore: open %s (%s): %v", e.Driver, e.Conn, e.Err)
}

// Unwrap returns the cause.
func (e *OpenError) Unwrap() error { return e.Err }
