package driver

import (
	"log/slog"
	"time"
)

// DefaultCacheBytes is the default bound of a Store's decoded-part cache.
const DefaultCacheBytes = 64 << 20

// DefaultTimeout bounds each operation of a store opened without
// WithTimeout: long enough for any Helm command on a healthy backend (a
// List of thousands of releases, a Create of a chart near Helm's size
// limits), short enough that a command facing a dead or blackholed server
// fails instead of hanging. Backends also derive server-side bounds from it
// (PostgreSQL's statement_timeout), so a statement never outlives the
// operation that sent it.
const DefaultTimeout = 2 * time.Minute

// Config is everything an Opener gets: what a face's Open was called with,
// after its options are applied. Backends read what concerns them.
type Config struct {
	// Name is the driver name the store was opened by ("postgres", ...).
	Name string
	// ConnectionString is the backend's connection string (a URL, DSN or
	// file path). It may hold a password: never log it; use Redact.
	ConnectionString string
	// CacheBytes bounds the decoded-part cache; 0 disables it.
	CacheBytes int64
	// Timeout bounds each Helm operation (0: no bound). It is
	// DefaultTimeout unless WithTimeout says otherwise.
	Timeout time.Duration
	// Log receives debug messages (Helm 3's DebugLog signature). Backends
	// and the engine log through it only.
	Log func(format string, v ...interface{})
	// Logger is where Log's messages go under a Helm 4 face (at debug
	// level), which sets both; nil under Helm 3's.
	Logger *slog.Logger
	// RESTClientGetter is how Kubernetes backends reach the cluster: the
	// getter Helm uses (a k8s.io/cli-runtime genericclioptions
	// RESTClientGetter: kubeconfig, context and namespace flags), held as
	// any so that this package links no Kubernetes code; nil for the
	// backends that need none.
	RESTClientGetter any
	// EncryptionKeys, when set, are the URLs of the key-encryption keys
	// (gocloud.dev/secrets keepers; the first current; "namespace=URL"
	// for one namespace alone) under which the
	// store encrypts every release's parts and head body at rest (package
	// encryption). They may hold keys: never log them.
	EncryptionKeys []string
}
