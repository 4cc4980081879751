package lifecycle

import (
	"fmt"
	"regexp"
	"strings"
	"time"

	"helm.sh/helm/v4/pkg/cli/values"
)

// Chart says where a chart comes from and how to fetch it, as helm's chart
// flags do (--version, --devel, --repo, --verify, credentials and TLS).
type Chart struct {
	// Ref is the CHART argument: a directory, an archive, repo/name, a
	// URL, an oci:// reference, or a name in Repo.
	Ref string
	// Version is a version constraint ("" for the latest stable).
	Version string
	// Devel also considers pre-release versions when Version is "".
	Devel bool
	// RepoURL is a chart repository to find Ref in (--repo).
	RepoURL string
	// Username and Password authenticate to the repository or registry.
	Username, Password string
	// PassCredentialsAll passes them to every domain.
	PassCredentialsAll bool
	// CertFile, KeyFile and CaFile are TLS files for the download.
	CertFile, KeyFile, CaFile string
	// InsecureSkipTLSVerify skips certificate checks; PlainHTTP uses HTTP.
	InsecureSkipTLSVerify, PlainHTTP bool
	// Verify requires a valid provenance file, checked with Keyring.
	Verify  bool
	Keyring string
	// DependencyUpdate updates missing dependencies before installing.
	DependencyUpdate bool
}

// Wait is how long and for what an operation waits.
type Wait struct {
	// Strategy is Helm 4's wait strategy: "" or "hookOnly" (wait for hooks
	// only), "watcher" (kstatus) or "legacy". With Helm 3 any strategy but
	// hookOnly is Helm 3's --wait.
	Strategy string
	// ForJobs also waits for Jobs to complete.
	ForJobs bool
	// Timeout bounds each Kubernetes operation (Helm's default: 5 minutes).
	Timeout time.Duration
}

// waits reports whether the strategy waits for resources (Helm 3's --wait).
func (w Wait) waits() bool { return w.Strategy != "" && w.Strategy != "hookOnly" }

// Apply is how objects are written to the cluster.
type Apply struct {
	// Force replaces objects (Helm 3's --force, Helm 4's --force-replace).
	Force bool
	// ForceConflicts forces server-side apply over conflicts (Helm 4).
	ForceConflicts bool
	// ServerSide is Helm 4's --server-side: "true", "false" or "auto"
	// ("": "true" on install, "auto" on upgrade and rollback). Helm 3
	// applies client-side and ignores it.
	ServerSide string
}

// DryRun values: a dry run renders and records nothing ("client": without
// contacting the cluster; "server": validated by it).
const (
	DryRunNone   = "none"
	DryRunClient = "client"
	DryRunServer = "server"
)

// Deploy is what an install and an upgrade share.
type Deploy struct {
	// Namespace is the release's namespace ("": Helm's, from the settings).
	Namespace string
	Chart     Chart
	Values    values.Options
	// DryRun is DryRunNone (""), DryRunClient or DryRunServer.
	DryRun string
	// HideSecret leaves Secrets out of a dry run's manifest.
	HideSecret bool
	// RollbackOnFailure is Helm 3's --atomic, Helm 4's --rollback-on-failure:
	// a failed install is uninstalled, a failed upgrade rolled back.
	RollbackOnFailure bool
	Wait              Wait
	Apply             Apply
	DisableHooks      bool
	SkipCRDs          bool
	SubNotes          bool
	// SkipSchemaValidation skips the chart's values schema.
	SkipSchemaValidation     bool
	DisableOpenAPIValidation bool
	EnableDNS                bool
	TakeOwnership            bool
	Description              string
	Labels                   map[string]string
	// PostRenderer is an executable (Helm 3) or a postrenderer plugin's
	// name (Helm 4), with PostRendererArgs.
	PostRenderer     string
	PostRendererArgs []string
}

// InstallOptions is an install's: helm install's flags.
type InstallOptions struct {
	Deploy
	// Name is the release's name; "" with GenerateName or NameTemplate,
	// which make one.
	Name            string
	GenerateName    bool
	NameTemplate    string
	CreateNamespace bool
	// Replace reuses the name of an uninstalled release kept in history.
	Replace bool
}

// UpgradeOptions is an upgrade's: helm upgrade's flags.
type UpgradeOptions struct {
	Deploy
	Name string
	// Install installs the release when it has no revision or its last is
	// uninstalled (upgrade --install), with CreateNamespace.
	Install         bool
	CreateNamespace bool
	// Installing is called, if set, when Install decides to install,
	// before anything else is done.
	Installing                                     func()
	ResetValues, ReuseValues, ResetThenReuseValues bool
	// MaxHistory bounds the revisions kept (0: no limit).
	MaxHistory    int
	CleanupOnFail bool
}

// RollbackOptions is a rollback's: helm rollback's flags.
type RollbackOptions struct {
	Namespace string
	Name      string
	// Revision is the revision to return to (0: the previous one).
	Revision int
	// DryRun is DryRunNone (""), DryRunClient or DryRunServer; Helm 3
	// knows no server dry run and treats it as a dry run.
	DryRun        string
	Wait          Wait
	Apply         Apply
	DisableHooks  bool
	CleanupOnFail bool
	MaxHistory    int
	// Description is Helm 4's --description.
	Description string
}

// UninstallOptions is an uninstall's: helm uninstall's flags.
type UninstallOptions struct {
	Namespace      string
	Name           string
	DryRun         bool
	DisableHooks   bool
	IgnoreNotFound bool
	KeepHistory    bool
	Wait           Wait
	// Cascade is "background" (""), "orphan" or "foreground".
	Cascade     string
	Description string
}

// TestOptions is a test run's: helm test's flags.
type TestOptions struct {
	Namespace string
	Name      string
	Timeout   time.Duration
	// Filters are helm test --filter's: name=NAME runs only those tests,
	// !name=NAME skips them.
	Filters []string
}

// testFilters splits helm test's --filter values into the names to run
// (name=NAME) and those to skip (!name=NAME, also "! name=NAME").
func testFilters(filters []string) (include, exclude []string) {
	notName := regexp.MustCompile(`^!\s?name=`)
	for _, f := range filters {
		if after, ok := strings.CutPrefix(f, "name="); ok {
			include = append(include, after)
		} else if notName.MatchString(f) {
			exclude = append(exclude, notName.ReplaceAllLiteralString(f, ""))
		}
	}
	return include, exclude
}

// cascade is an uninstall's deletion propagation, background by default.
func cascade(c string) string {
	if c == "" {
		return "background"
	}
	return c
}

// checkCascade refuses a deletion propagation other than background,
// orphan and foreground, with helm's message.
func checkCascade(c string) error {
	switch c = cascade(c); c {
	case "background", "foreground", "orphan":
		return nil
	}
	return fmt.Errorf("invalid cascade value (%s). Must be \"background\", \"foreground\", or \"orphan\"", c)
}
