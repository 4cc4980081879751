package memstore

import (
	"context"
	"sync"

	"github.com/helmstore/helmstore/driver"
)

// Name is the driver name memstore registers.
const Name = "memstore"

func init() { driver.Register(Name, Open) }

// Open is memstore's driver.Opener: the backend over the space the
// connection string names ("" is a new private space). A real backend
// connects here (and checks the connection, so that Open fails on a bad
// address rather than the first Helm command).
func Open(ctx context.Context, cfg *driver.Config) (driver.Backend, error) {
	return attach(cfg.ConnectionString), nil
}

// spaces are the named spaces that stores are open on, by name.
var (
	spacesMu sync.Mutex
	spaces   = map[string]*space{}
)

// attach returns a Backend over the space called name, creating it if no
// store is open on it; "" is a new private space.
func attach(name string) *memBackend {
	spacesMu.Lock()
	defer spacesMu.Unlock()
	s := spaces[name]
	if s == nil || name == "" {
		s = newSpace()
		if name != "" {
			spaces[name] = s
		}
	}
	s.stores++
	return &memBackend{s: s, name: name}
}

// detach closes one store on space b.s, forgetting the space when it was
// the last.
func (b *memBackend) detach() {
	spacesMu.Lock()
	defer spacesMu.Unlock()
	b.s.stores--
	if b.s.stores == 0 && spaces[b.name] == b.s {
		delete(spaces, b.name)
	}
}
