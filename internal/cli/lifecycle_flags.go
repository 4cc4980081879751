package cli

import (
	"fmt"
	"os"
	"strconv"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	helmvalues "helm.sh/helm/v4/pkg/cli/values"

	"github.com/helmstore/helmstore/internal/lifecycle"
)

// defaultTimeout is helm's --timeout default.
const defaultTimeout = 300 * time.Second

// opFlags are the flags of the lifecycle commands whose form differs
// between Helm 3 and Helm 4 (--wait, --dry-run, --force, --server-side,
// --atomic), bound to what the lifecycle takes.
type opFlags struct {
	helm  int
	wait  lifecycle.Wait
	wait3 bool // Helm 3's --wait
	// dryRun3 is Helm 3's boolean --dry-run of rollback and uninstall.
	dryRun3 bool
	dryRun  string // as given
	apply   lifecycle.Apply
	// serverSide is Helm 4's install --server-side, a boolean there.
	serverSide bool
	// waitWarning is Helm 4's warning for a deprecated --wait value.
	waitWarning string
	install     bool
}

// addWait adds --wait (Helm 3: a boolean; Helm 4: a strategy), and with
// jobs --wait-for-jobs, and --timeout.
func (o *opFlags) addWait(cmd *cobra.Command, jobs bool) {
	f := cmd.Flags()
	if o.helm == 3 {
		f.BoolVar(&o.wait3, "wait", false, "if set, will wait until all Pods, PVCs, Services, and minimum number of Pods of a Deployment, StatefulSet, or ReplicaSet are in a ready state before marking the release as successful. It will wait for as long as --timeout")
	} else {
		o.wait.Strategy = "hookOnly"
		f.Var(waitValue{&o.wait.Strategy, &o.waitWarning}, "wait", "wait until resources are ready (up to --timeout). Use '--wait' alone for 'watcher' strategy, or specify one of: 'watcher', 'hookOnly', 'legacy'. Default when flag is omitted: 'hookOnly'.")
		f.Lookup("wait").NoOptDefVal = "watcher"
	}
	if jobs {
		f.BoolVar(&o.wait.ForJobs, "wait-for-jobs", false, "if set and --wait enabled, will wait until all Jobs have been completed before marking the release as successful. It will wait for as long as --timeout")
	}
	f.DurationVar(&o.wait.Timeout, "timeout", defaultTimeout, "time to wait for any individual Kubernetes operation (like Jobs for hooks)")
}

// waitValue is Helm 4's --wait: a strategy, or (deprecated) a boolean,
// for which it leaves a warning in warn.
type waitValue struct{ s, warn *string }

func (w waitValue) String() string { return *w.s }
func (w waitValue) Type() string   { return "WaitStrategy" }

// Set accepts watcher, hookOnly, legacy, and true and false for watcher
// and hookOnly.
func (w waitValue) Set(s string) error {
	switch s {
	case "watcher", "hookOnly", "legacy":
		*w.s = s
	case "true", "false":
		*w.s = map[string]string{"true": "watcher", "false": "hookOnly"}[s]
		*w.warn = fmt.Sprintf("--wait=%s is deprecated (boolean value) and can be replaced with --wait=%s", s, *w.s)
	default:
		return fmt.Errorf("invalid wait input %q. Valid inputs are watcher, hookOnly, and legacy", s)
	}
	return nil
}

// addDryRun adds --dry-run as each Helm has it; with what (Helm 3's
// rollback and uninstall, "a rollback"), a boolean simulating what.
func (o *opFlags) addDryRun(cmd *cobra.Command, what string) {
	f := cmd.Flags()
	if o.helm == 3 {
		if what != "" {
			f.BoolVar(&o.dryRun3, "dry-run", false, "simulate "+what)
			return
		}
		f.StringVar(&o.dryRun, "dry-run", "", "simulate an install. If --dry-run is set with no option being specified or as '--dry-run=client', it will not attempt cluster connections. Setting '--dry-run=server' allows attempting cluster connections.")
		f.Lookup("dry-run").NoOptDefVal = "client"
		return
	}
	f.StringVar(&o.dryRun, "dry-run", "none", `simulates the operation without persisting changes. Must be one of: "none" (default), "client", or "server". '--dry-run=none' executes the operation normally and persists changes (no simulation). '--dry-run=client' simulates the operation client-side only and avoids cluster connections. '--dry-run=server' simulates the operation on the server, requiring cluster connectivity.`)
	f.Lookup("dry-run").NoOptDefVal = "unset"
}

// addApply adds Helm 3's --force, or Helm 4's --force-replace (--force,
// deprecated), --force-conflicts and --server-side.
func (o *opFlags) addApply(cmd *cobra.Command, force string) {
	f := cmd.Flags()
	if o.helm == 3 {
		f.BoolVar(&o.apply.Force, "force", false, force)
		return
	}
	f.BoolVar(&o.apply.Force, "force-replace", false, "force resource updates by replacement")
	f.BoolVar(&o.apply.Force, "force", false, "deprecated")
	f.MarkDeprecated("force", "use --force-replace instead")
	f.BoolVar(&o.apply.ForceConflicts, "force-conflicts", false, "if set server-side apply will force changes against conflicts")
	if o.install {
		f.BoolVar(&o.serverSide, "server-side", true, "object updates run in the server instead of the client")
	} else {
		f.StringVar(&o.apply.ServerSide, "server-side", "auto", `must be "true", "false" or "auto". Object updates run in the server instead of the client ("auto" defaults the value from the previous chart release's method)`)
	}
	cmd.MarkFlagsMutuallyExclusive("force-replace", "force-conflicts")
	cmd.MarkFlagsMutuallyExclusive("force", "force-conflicts")
}

// addRollbackOnFailure adds Helm 3's --atomic, or Helm 4's
// --rollback-on-failure (--atomic, deprecated).
func (o *opFlags) addRollbackOnFailure(f *pflag.FlagSet, v *bool, what string) {
	if o.helm == 3 {
		f.BoolVar(v, "atomic", false, "if set, "+what+". The --wait flag will be set automatically if --atomic is used")
		return
	}
	f.BoolVar(v, "rollback-on-failure", false, "if set, Helm will "+what+". The --wait flag will be defaulted to \"watcher\" if --rollback-on-failure is set")
	f.BoolVar(v, "atomic", false, "deprecated")
	f.MarkDeprecated("atomic", "use --rollback-on-failure instead")
}

// resolve turns the flags as given into the lifecycle's terms, warning of
// deprecated forms on warn as helm does.
func (o *opFlags) resolve(cmd *cobra.Command, e *env) error {
	if o.helm == 3 {
		if o.wait3 {
			o.wait.Strategy = "legacy"
		}
		if o.dryRun3 {
			o.dryRun = lifecycle.DryRunClient
		}
		if o.dryRun == "" {
			o.dryRun = lifecycle.DryRunNone
		}
		return nil
	}
	if o.install {
		o.apply.ServerSide = strconv.FormatBool(o.serverSide)
	}
	if o.waitWarning != "" {
		e.warn("%s", o.waitWarning)
	}
	f := cmd.Flags().Lookup("dry-run")
	if f == nil || f.Value.Type() != "string" {
		return nil // uninstall's is a boolean
	}
	switch v := o.dryRun; v {
	case f.NoOptDefVal:
		e.warn(`--dry-run is deprecated and should be replaced with '--dry-run=client'`)
		o.dryRun = lifecycle.DryRunClient
	case lifecycle.DryRunClient, lifecycle.DryRunServer, lifecycle.DryRunNone:
	default:
		b, err := strconv.ParseBool(v)
		if err != nil {
			return fmt.Errorf(`invalid dry-run value (%q). Must be "none", "server", or "client"`, v)
		}
		o.dryRun = lifecycle.DryRunNone
		if b {
			o.dryRun = lifecycle.DryRunClient
		}
		e.warn("boolean '--dry-run=%v' flag is deprecated and must be replaced with '--dry-run=%s'", v, o.dryRun)
	}
	return nil
}

// addValueFlags adds helm's values flags (-f, --set and its kinds).
func addValueFlags(f *pflag.FlagSet, v *helmvalues.Options) {
	f.StringSliceVarP(&v.ValueFiles, "values", "f", []string{}, "specify values in a YAML file or a URL (can specify multiple)")
	f.StringArrayVar(&v.Values, "set", []string{}, "set values on the command line (can specify multiple or separate values with commas: key1=val1,key2=val2)")
	f.StringArrayVar(&v.StringValues, "set-string", []string{}, "set STRING values on the command line (can specify multiple or separate values with commas: key1=val1,key2=val2)")
	f.StringArrayVar(&v.FileValues, "set-file", []string{}, "set values from respective files specified via the command line (can specify multiple or separate values with commas: key1=path1,key2=path2)")
	f.StringArrayVar(&v.JSONValues, "set-json", []string{}, "set JSON values on the command line (can specify multiple or separate values with commas: key1=jsonval1,key2=jsonval2)")
	f.StringArrayVar(&v.LiteralValues, "set-literal", []string{}, "set a literal STRING value on the command line")
}

// addChartFlags adds helm's flags for locating and fetching a chart.
func addChartFlags(f *pflag.FlagSet, c *lifecycle.Chart) {
	f.StringVar(&c.Version, "version", "", "specify a version constraint for the chart version to use. This constraint can be a specific tag (e.g. 1.1.1) or it may reference a valid range (e.g. ^2.0.0). If this is not specified, the latest version is used")
	f.BoolVar(&c.Verify, "verify", false, "verify the package before using it")
	f.StringVar(&c.Keyring, "keyring", defaultKeyring(), "location of public keys used for verification")
	f.StringVar(&c.RepoURL, "repo", "", "chart repository url where to locate the requested chart")
	f.StringVar(&c.Username, "username", "", "chart repository username where to locate the requested chart")
	f.StringVar(&c.Password, "password", "", "chart repository password where to locate the requested chart")
	f.StringVar(&c.CertFile, "cert-file", "", "identify HTTPS client using this SSL certificate file")
	f.StringVar(&c.KeyFile, "key-file", "", "identify HTTPS client using this SSL key file")
	f.BoolVar(&c.InsecureSkipTLSVerify, "insecure-skip-tls-verify", false, "skip tls certificate checks for the chart download")
	f.BoolVar(&c.PlainHTTP, "plain-http", false, "use insecure HTTP connections for the chart download")
	f.StringVar(&c.CaFile, "ca-file", "", "verify certificates of HTTPS-enabled servers using this CA bundle")
	f.BoolVar(&c.PassCredentialsAll, "pass-credentials", false, "pass credentials to all domains")
	f.BoolVar(&c.Devel, "devel", false, "use development versions, too. Equivalent to version '>0.0.0-0'. If --version is set, this is ignored")
	f.BoolVar(&c.DependencyUpdate, "dependency-update", false, "update dependencies if they are missing before installing the chart")
}

// defaultKeyring is helm's --keyring default.
func defaultKeyring() string {
	return os.ExpandEnv("$HOME/.gnupg/pubring.gpg")
}
