package lifecycle

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"

	"helm.sh/helm/v4/pkg/cli"
	rspb "helm.sh/helm/v4/pkg/release/v1"
)

// Config is where the lifecycle runs: which Helm, which store, the
// cluster and Helm's paths.
type Config struct {
	// Helm is 3 or 4: whose action package runs the operations, with its
	// apply method, hooks and waits (0: 4).
	Helm int
	// Settings are Helm 4's settings (kubeconfig, context, namespace,
	// repositories, registry configuration, plugins), from helm's flags
	// and HELM_* variables; Helm 3's are derived from them.
	Settings *cli.EnvSettings
	// Driver names the store as HELM_DRIVER does: one of helmstore's
	// backends (postgres, mysql, sqlite, redis, cosmos, crsplit) or Helm's
	// own (secret, configmap, memory, sql; "" is secret).
	Driver string
	// Connection is the store's connection string ("": from the
	// environment, as HELM_DRIVER's store reads it).
	Connection string
	// Out receives what Helm prints while it works (registry pulls,
	// dependency updates); nil discards it.
	Out io.Writer
	// Log receives Helm's warnings and, with Settings.Debug, its debug
	// lines; nil is standard error.
	Log io.Writer
}

// Client runs lifecycle operations on one store. It is safe for one
// operation at a time.
type Client struct {
	cfg  Config
	face face
}

// face is one Helm's lifecycle.
type face interface {
	install(ctx context.Context, o InstallOptions) (*Release, error)
	upgrade(ctx context.Context, o UpgradeOptions) (*Release, error)
	rollback(ctx context.Context, o RollbackOptions) error
	uninstall(ctx context.Context, o UninstallOptions) (string, error)
	test(ctx context.Context, o TestOptions) (*TestRun, error)
	close() error
}

// New opens the store cfg names for the Helm it names.
func New(ctx context.Context, cfg Config) (*Client, error) {
	if cfg.Settings == nil {
		cfg.Settings = cli.New()
	}
	if cfg.Out == nil {
		cfg.Out = io.Discard
	}
	if cfg.Log == nil {
		cfg.Log = os.Stderr
	}
	var (
		f   face
		err error
	)
	switch cfg.Helm {
	case 3:
		f, err = newFace3(ctx, cfg)
	case 0, 4:
		cfg.Helm = 4
		f, err = newFace4(ctx, cfg)
	default:
		return nil, fmt.Errorf("%w: %d (3 or 4)", ErrUnknownHelm, cfg.Helm)
	}
	if err != nil {
		return nil, err
	}
	return &Client{cfg: cfg, face: f}, nil
}

// ErrUnknownHelm is a Config naming a Helm other than 3 and 4.
var ErrUnknownHelm = errors.New("unknown Helm major version")

// Helm is the Helm the client runs (3 or 4).
func (c *Client) Helm() int { return c.cfg.Helm }

// Close closes the store.
func (c *Client) Close() error { return c.face.close() }

// Install installs a chart as a new release.
func (c *Client) Install(ctx context.Context, o InstallOptions) (*Release, error) {
	return c.face.install(ctx, o)
}

// Upgrade upgrades a release to a chart (or installs it, with o.Install).
func (c *Client) Upgrade(ctx context.Context, o UpgradeOptions) (*Release, error) {
	return c.face.upgrade(ctx, o)
}

// Rollback rolls a release back to a revision.
func (c *Client) Rollback(ctx context.Context, o RollbackOptions) error {
	return c.face.rollback(ctx, o)
}

// Uninstall uninstalls a release; the text is what Helm reports of it
// (resources kept by policy), often "".
func (c *Client) Uninstall(ctx context.Context, o UninstallOptions) (string, error) {
	return c.face.uninstall(ctx, o)
}

// Test runs a release's tests. The run is returned with the release even
// when a test failed (with the error), so that its status and logs can be
// shown; Close it when done.
func (c *Client) Test(ctx context.Context, o TestOptions) (*TestRun, error) {
	return c.face.test(ctx, o)
}

// Release is a release as an operation left it: in Helm 4's form, and as
// the Helm that ran the operation returned it.
type Release struct {
	// Release is the release in Helm 4's form (also for Helm 3, converted
	// through Helm's JSON, as the stores do).
	*rspb.Release
	native any
}

// Native is the release as the Helm that ran the operation returned it:
// a *release.Release of helm.sh/helm/v3/pkg/release or a *v1.Release of
// helm.sh/helm/v4/pkg/release/v1; helm prints this one with -o json|yaml.
func (r *Release) Native() any { return r.native }

// TestRun is the outcome of a release's tests.
type TestRun struct {
	// Release is the release with its test hooks' last runs.
	Release *Release
	logs    func(io.Writer) error
	done    func() error
}

// Logs writes the logs of the test Pods, as helm test --logs does.
func (t *TestRun) Logs(w io.Writer) error { return t.logs(w) }

// Close ends the run (Helm 4 deletes test hooks by their policy then).
func (t *TestRun) Close() error {
	if t.done == nil {
		return nil
	}
	return t.done()
}

// Op names the Helm action an ActionError comes from.
type Op string

// The actions.
const (
	OpInstall   Op = "install"
	OpUpgrade   Op = "upgrade"
	OpRollback  Op = "rollback"
	OpUninstall Op = "uninstall"
	OpTest      Op = "test"
)

// ActionError is an error of the Helm action itself (as opposed to one of
// preparing it: locating the chart, reading values), which helm's commands
// prefix (INSTALLATION FAILED, UPGRADE FAILED). It unwraps to Helm's error.
type ActionError struct {
	Op  Op
	Err error
}

func (e *ActionError) Error() string { return e.Err.Error() }

// Unwrap returns Helm's error.
func (e *ActionError) Unwrap() error { return e.Err }

// actionErr wraps a non-nil err of op's action.
func actionErr(op Op, err error) error {
	if err == nil {
		return nil
	}
	return &ActionError{Op: op, Err: err}
}

// ErrNotInstallable is a chart of a type other than application.
var ErrNotInstallable = errors.New("charts are not installable")

// notInstallable is Helm's error for a chart of type typ.
func notInstallable(typ string) error {
	return fmt.Errorf("%s %w", typ, ErrNotInstallable)
}

// errDependencies wraps a chart's missing dependencies as helm does.
func errDependencies(helm int, err error) error {
	if helm == 3 {
		//lint:ignore ST1005 Helm 3's own message, printed as helm prints it
		return fmt.Errorf("An error occurred while checking for chart dependencies. You may need to run `helm dependency build` to fetch missing dependencies: %w", err)
	}
	return fmt.Errorf("an error occurred while checking for chart dependencies. You may need to run 'helm dependency build' to fetch missing dependencies: %w", err)
}

// namespaceOr is ns, or the settings' namespace when ns is "".
func (c Config) namespaceOr(ns string) string {
	if ns != "" {
		return ns
	}
	return c.Settings.Namespace()
}

// logf writes a line to the log.
func (c Config) logf(format string, args ...any) {
	fmt.Fprintf(c.Log, format+"\n", args...)
}

// debugf writes a debug line to the log with --debug, as Helm 3 does.
func (c Config) debugf(format string, args ...any) {
	if c.Settings.Debug {
		fmt.Fprintf(c.Log, "[debug] "+format+"\n", args...)
	}
}

// errRegistryClient wraps an error making the registry client as helm does.
func errRegistryClient(err error) error {
	return fmt.Errorf("missing registry client: %w", err)
}
