// Package cli is the helmstore command (cmd/helmstore) and the `helm store`
// plugin, which runs the same binary: the global flags and environment of
// Helm's own command line, and one file per subcommand. The lifecycle
// commands (install, upgrade, rollback, uninstall, test) are a thin layer
// over package lifecycle.
package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/spf13/cobra"
	"helm.sh/helm/v4/pkg/cli"
	"k8s.io/cli-runtime/pkg/genericclioptions"

	// Every backend, so that any HELM_DRIVER name opens.
	_ "github.com/helmstore/helmstore/cosmos"
	_ "github.com/helmstore/helmstore/crsplit"
	"github.com/helmstore/helmstore/internal/registry"
	_ "github.com/helmstore/helmstore/redis"
	_ "github.com/helmstore/helmstore/sql"

	// Encryption at rest (HELM_DRIVER_ENCRYPTION_KEYS), with the local
	// keeper (base64key://).
	_ "github.com/helmstore/helmstore/encryption"
	_ "gocloud.dev/secrets/localsecrets"

	"github.com/helmstore/helmstore/internal/lifecycle"
	"github.com/helmstore/helmstore/migrate"
)

// env is what every subcommand shares: Helm's settings (kubeconfig,
// context, namespace, from flags and HELM_* variables), the store the
// command works on and where it writes.
type env struct {
	settings *cli.EnvSettings
	// driver and conn name the store, as HELM_DRIVER and its connection
	// string variable do.
	driver, conn string
	// helm is the Helm whose lifecycle and output the lifecycle commands
	// have: 3 or 4 (--helm, $HELMSTORE_HELM; 4 by default).
	helm        int
	out, errOut io.Writer
}

// Main runs the command with the process's arguments and returns its exit
// status.
func Main() int {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	root := NewRootCmd(os.Stdout, os.Stderr, os.Args[1:])
	if cmd, err := root.ExecuteContextC(ctx); err != nil {
		fmt.Fprintln(os.Stderr, "Error:", errorText(cmd, err))
		var ee exitError
		if errors.As(err, &ee) {
			return ee.code
		}
		return 1
	}
	return 0
}

// lifecycleCommand marks (as a cobra annotation) the commands whose errors
// are Helm's, printed as helm prints them.
const lifecycleCommand = "helmstore/lifecycle"

// errorText is err's text without a password of a connection string the
// command was given (by flag or environment). The lifecycle commands print
// Helm's errors as they are otherwise; the others also redact the words of
// the text that have the form of a connection string (registry.RedactText).
func errorText(cmd *cobra.Command, err error) string {
	msg := err.Error()
	var conns []string
	for _, kv := range os.Environ() {
		if k, v, _ := strings.Cut(kv, "="); strings.HasPrefix(k, "HELM_DRIVER_") && strings.HasSuffix(k, "_CONNECTION_STRING") {
			conns = append(conns, v)
		}
	}
	if cmd != nil {
		for _, name := range []string{"connection", "from-connection", "to-connection"} {
			if f := cmd.Flags().Lookup(name); f != nil {
				conns = append(conns, f.Value.String())
			}
		}
	}
	for _, c := range conns {
		msg = registry.ScrubText(msg, c)
	}
	if cmd != nil && cmd.Annotations[lifecycleCommand] != "" {
		return msg
	}
	return registry.RedactText(msg)
}

// exitError is an error with an exit status other than 1.
type exitError struct {
	code int
	err  error
}

func (e exitError) Error() string { return e.err.Error() }
func (e exitError) Unwrap() error { return e.err }

// DriverEnv names the store for helmstore alone, before HELM_DRIVER: the
// helm binary reads HELM_DRIVER itself and stops on a name it does not know
// (postgres, ...) before it runs a plugin, so `helm store` needs its own.
const DriverEnv = "HELMSTORE_DRIVER"

// HelmEnv names the Helm (3 or 4) whose lifecycle and output the lifecycle
// commands have; the plugin sets it for the helm that runs it.
const HelmEnv = "HELMSTORE_HELM"

// NewRootCmd returns the helmstore command with every subcommand, writing
// to out and errOut. args are the command line's arguments, from which
// --helm is read first: the lifecycle commands' flags are those of the
// Helm it names.
func NewRootCmd(out, errOut io.Writer, args []string) *cobra.Command {
	e := &env{settings: cli.New(), out: out, errOut: errOut, helm: helmMajor(args)}
	root := &cobra.Command{
		Use:   "helmstore",
		Short: "Install, upgrade, move, inspect and check Helm releases in any store",
		Long: `helmstore moves Helm releases between any two stores (Helm's Secrets, ConfigMaps and SQL
drivers and every helmstore backend), checks them, and shows them as helm does.

A store is named as HELM_DRIVER names it: secret, configmap, sql, postgres, mysql, sqlite,
redis, cosmos, crsplit. Its connection string comes from --connection or from the environment
(HELM_DRIVER_SQL_CONNECTION_STRING for sql, HELM_DRIVER_<NAME>_CONNECTION_STRING otherwise).
As a Helm plugin it runs as "helm store ...", with helm's flags and environment.

install, upgrade, rollback, uninstall and test run the release lifecycle on any store as
helm does, with the flags and output of Helm 4 (--helm 4, the default) or Helm 3 (--helm 3),
through that Helm's own action package. $HELMSTORE_DRIVER names the store before
$HELM_DRIVER (which the helm binary itself reads, and refuses for names it does not know).`,
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.SetOut(out)
	root.SetErr(errOut)
	f := root.PersistentFlags()
	e.settings.AddFlags(f)
	f.StringVar(&e.driver, "driver", driverFromEnv(), "the store, as HELM_DRIVER names it (default: $HELMSTORE_DRIVER, else $HELM_DRIVER, else Helm's secret)")
	f.IntVar(&e.helm, "helm", e.helm, "the Helm whose lifecycle, flags and output install, upgrade, rollback, uninstall and test have: 3 or 4 (default: $HELMSTORE_HELM, else 4)")
	f.StringVar(&e.conn, "connection", "", "the store's connection string (default: from the environment, as HELM_DRIVER's store reads it)")
	root.AddCommand(newMigrateCmd(e), newVerifyCmd(e), newStatsCmd(e), newGCCmd(e),
		newListCmd(e), newHistoryCmd(e), newStatusCmd(e), newGetCmd(e), newRewrapCmd(e), newSealCmd(e),
		newInstallCmd(e), newUpgradeCmd(e), newRollbackCmd(e), newUninstallCmd(e), newReleaseTestCmd(e), newVersionCmd(e), newCRDsCmd(e))
	for _, c := range root.Commands() {
		if c.Annotations[lifecycleCommand] == "" && c.Name() != "migrate" && c.Name() != "version" && c.Name() != "crds" {
			hideFlags(c, chartFlags)
		}
	}
	root.PersistentPreRunE = func(*cobra.Command, []string) error {
		if e.helm != 3 && e.helm != 4 {
			return fmt.Errorf("--helm %d: 3 or 4", e.helm)
		}
		configureColor(e.settings.ColorMode)
		return nil
	}
	return root
}

// driverFromEnv is the store the environment names: $HELMSTORE_DRIVER,
// else $HELM_DRIVER.
func driverFromEnv() string {
	if d := os.Getenv(DriverEnv); d != "" {
		return d
	}
	return os.Getenv("HELM_DRIVER")
}

// helmMajor is the Helm that --helm in args names, else $HELMSTORE_HELM,
// else 4; a value other than 3 is 4 (--helm itself refuses it later).
func helmMajor(args []string) int {
	v := os.Getenv(HelmEnv)
	for i, a := range args {
		if a == "--" {
			break
		}
		if after, ok := strings.CutPrefix(a, "--helm="); ok {
			v = after
		} else if a == "--helm" && i+1 < len(args) {
			v = args[i+1]
		}
	}
	if v == "3" {
		return 3
	}
	return 4
}

// warn writes a warning to standard error as the Helm of --helm does:
// Helm 4 through its logger (level=WARN msg=...), Helm 3 as WARNING: ...
func (e *env) warn(format string, args ...any) {
	if e.helm == 4 {
		slog.New(lifecycle.LogHandler(e.errOut, false)).Warn(fmt.Sprintf(format, args...))
		return
	}
	fmt.Fprintf(e.errOut, "WARNING: "+format+"\n", args...)
}

// open opens the store named name with connection string conn ("": the
// environment's).
func (e *env) open(ctx context.Context, name, conn string) (migrate.Store, error) {
	return migrate.Open(ctx, name, conn, e.getter())
}

// bulkQPS is the rate of requests to the Kubernetes API the commands allow
// themselves when neither --qps nor HELM_QPS sets one: no client-side
// limit (-1), as crsplit takes for itself. Helm leaves it to client-go,
// whose 5 a second held a move of 2,000 revisions out of Secrets to 100 a
// minute (three requests each); the commands' parallelism (--parallel)
// bounds the load, and the API server's priority and fairness protects
// the cluster.
const bulkQPS = -1

// getter is the Kubernetes client configuration of Helm's flags and
// environment, with bulkQPS when they set no rate.
func (e *env) getter() genericclioptions.RESTClientGetter {
	if e.settings.QPS == 0 {
		e.settings.QPS = bulkQPS
	}
	return e.settings.RESTClientGetter()
}

// storeName is the store --driver names: $HELM_DRIVER by default, Helm's
// Secrets when that is empty, as in Helm.
func (e *env) storeName() string {
	if e.driver == "" {
		return "secret"
	}
	return e.driver
}

// namespace is the namespace the command works in: "" with -A
// (allNamespaces), else --namespace, $HELM_NAMESPACE or the kubeconfig's.
func (e *env) namespace(allNamespaces bool) string {
	if allNamespaces {
		return ""
	}
	return e.settings.Namespace()
}

// onStore is a subcommand's RunE that opens the store --driver names,
// runs fn on it and closes it.
func (e *env) onStore(fn func(ctx context.Context, s migrate.Store) error) func(*cobra.Command, []string) error {
	return func(cmd *cobra.Command, _ []string) error {
		ctx := cmd.Context()
		s, err := e.open(ctx, e.storeName(), e.conn)
		if err != nil {
			return err
		}
		defer s.Close()
		return fn(ctx, s)
	}
}

// chartFlags are the global flags only the lifecycle commands use: where
// charts come from (repositories, registries, their caches).
var chartFlags = []string{"repository-config", "repository-cache", "registry-config", "content-cache"}

// lifecycleOnlyFlags are chartFlags and --helm, which only the lifecycle
// commands and status and get (which print as that Helm does) use.
var lifecycleOnlyFlags = append([]string{"helm"}, chartFlags...)

// hideFlags leaves the global flags names out of cmd's help: flags that do
// nothing there.
func hideFlags(cmd *cobra.Command, names []string) {
	cmd.SetHelpFunc(func(c *cobra.Command, args []string) {
		for _, n := range names {
			if f := c.InheritedFlags().Lookup(n); f != nil {
				f.Hidden = true
			}
		}
		c.Root().HelpFunc()(c, args)
	})
}
