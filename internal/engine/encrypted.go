package engine

import (
	"context"

	"github.com/helmstore/helmstore/driver"
	"github.com/helmstore/helmstore/internal/registry"
)

// encrypted is b as cfg.EncryptionKeys say (registry.Encrypt), opening the
// keys within cfg.Timeout; if they cannot be used, a backend whose every
// call fails with why, so that no release is ever written in plaintext to
// a store configured for encryption.
func encrypted(b driver.Backend, cfg *driver.Config) driver.Backend {
	if len(cfg.EncryptionKeys) == 0 {
		return b
	}
	ctx := context.Background()
	if cfg.Timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, cfg.Timeout)
		defer cancel()
	}
	eb, err := registry.Encrypt(ctx, b, cfg)
	if err != nil {
		return unusable{err}
	}
	return eb
}

// unusable is a backend whose every call fails with err.
type unusable struct{ err error }

func (u unusable) Heads(context.Context, driver.Query) ([]*driver.Head, error) { return nil, u.err }
func (u unusable) Parts(context.Context, []driver.PartRef) (map[driver.Digest][]byte, error) {
	return nil, u.err
}
func (u unusable) Create(context.Context, *driver.Head, []*driver.Part) error { return u.err }
func (u unusable) Update(context.Context, *driver.Head, []*driver.Part) error { return u.err }
func (u unusable) Delete(context.Context, string, string, func(driver.Digest) bool) (*driver.Head, map[driver.Digest][]byte, error) {
	return nil, nil, u.err
}
func (u unusable) List(context.Context, driver.ListQuery) ([]*driver.Head, error) { return nil, u.err }
func (u unusable) Stats(context.Context, string) (driver.Stats, error)            { return driver.Stats{}, u.err }
func (u unusable) Close() error                                                   { return nil }
