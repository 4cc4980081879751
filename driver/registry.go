package driver

import (
	"context"
	"sort"
	"sync"
)

// Opener opens a Backend from a Config. Every provider's Open is one, and
// passes itself to Register in its init.
type Opener func(ctx context.Context, cfg *Config) (Backend, error)

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
	if _, dup := openers[name]; dup || name == "" {
		panic("helmstore: Register called twice for driver " + name)
	}
	openers[name] = open
}

// Drivers returns the names of the registered backends, sorted.
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

// Lookup returns the Opener registered as name, if there is one.
func Lookup(name string) (Opener, bool) {
	regMu.RLock()
	defer regMu.RUnlock()
	open, ok := openers[name]
	return open, ok
}
