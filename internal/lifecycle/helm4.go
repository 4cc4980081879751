package lifecycle

import (
	"context"
	"fmt"
	"io"
	"log/slog"

	"helm.sh/helm/v4/pkg/action"
	"helm.sh/helm/v4/pkg/chart"
	"helm.sh/helm/v4/pkg/chart/loader"
	"helm.sh/helm/v4/pkg/cli/values"
	"helm.sh/helm/v4/pkg/downloader"
	"helm.sh/helm/v4/pkg/getter"
	"helm.sh/helm/v4/pkg/kube"
	"helm.sh/helm/v4/pkg/postrenderer"
	registry4 "helm.sh/helm/v4/pkg/registry"
	ri "helm.sh/helm/v4/pkg/release"
	rcommon "helm.sh/helm/v4/pkg/release/common"
	rspb "helm.sh/helm/v4/pkg/release/v1"

	"github.com/helmstore/helmstore/helm4"
	"github.com/helmstore/helmstore/internal/registry"
)

// face4 is Helm 4's lifecycle: helm.sh/helm/v4/pkg/action on the helm4
// face of the store (or Helm 4's own driver).
type face4 struct {
	cfg   Config
	log   slog.Handler
	store helm4.Store // nil for Helm's own drivers
}

// statusComputeWorkers is how many workers compute resource statuses in
// a kstatus wait: the helm 4 command's default (its SDK's is none).
const statusComputeWorkers = 8

func newFace4(ctx context.Context, cfg Config) (*face4, error) {
	// Objects are managed by "helm", as by the helm binary, so that helm
	// and helmstore can take turns on a release (server-side apply).
	kube.ManagedFieldsManager = "helm"
	h := LogHandler(cfg.Log, cfg.Settings.Debug)
	f := &face4{cfg: cfg, log: h}
	if registry.IsHelmDriver(cfg.Driver) {
		setHelmSQLConnection(cfg)
		return f, nil
	}
	s, err := helm4.Open(ctx, cfg.Driver, connection(cfg), helm4.WithRESTClientGetter(cfg.Settings.RESTClientGetter()), helm4.WithLogger(h))
	if err != nil {
		return nil, err
	}
	f.store = s
	return f, nil
}

func (f *face4) close() error {
	if f.store == nil {
		return nil
	}
	return f.store.Close()
}

// configuration is an action configuration for namespace ns on the store.
func (f *face4) configuration(ns string) (*action.Configuration, error) {
	ac := action.NewConfiguration(action.ConfigurationSetLogger(f.log))
	getter := f.cfg.Settings.RESTClientGetter()
	var err error
	if f.store == nil {
		err = ac.Init(getter, ns, f.cfg.Driver)
	} else {
		err = helm4.Configure(ac, getter, ns, f.store)
	}
	if err != nil {
		return nil, err
	}
	ac.SetHookOutputFunc(func(_, _, _ string) io.Writer { return f.cfg.Log })
	return ac, nil
}

// LogHandler is a handler for Helm 4's logger as the helm 4 command has
// it: text lines without a time (level=WARN msg=...), debug ones only with
// debug.
func LogHandler(w io.Writer, debug bool) slog.Handler {
	level := slog.LevelInfo
	if debug {
		level = slog.LevelDebug
	}
	return slog.NewTextHandler(w, &slog.HandlerOptions{Level: level, ReplaceAttr: func(_ []string, a slog.Attr) slog.Attr {
		if a.Key == slog.TimeKey {
			return slog.Attr{}
		}
		return a
	}})
}

// waitOptions are the wait options of the helm 4 command.
func waitOptions() []kube.WaitOption {
	return []kube.WaitOption{kube.WithStatusComputeWorkers(statusComputeWorkers)}
}

// waitStrategy is w's strategy, hookOnly when unset.
func waitStrategy(w Wait) kube.WaitStrategy {
	if w.Strategy == "" {
		return kube.HookOnlyStrategy
	}
	return kube.WaitStrategy(w.Strategy)
}

// dryRun4 is d as Helm 4's strategy.
func dryRun4(d string) (action.DryRunStrategy, error) {
	switch d {
	case "", DryRunNone:
		return action.DryRunNone, nil
	case DryRunClient, DryRunServer:
		return action.DryRunStrategy(d), nil
	}
	return action.DryRunNone, fmt.Errorf(`invalid dry-run value (%q). Must be "none", "server", or "client"`, d)
}

// registryClient is the OCI registry client for c, as helm 4 makes it.
func (f *face4) registryClient(c Chart) (*registry4.Client, error) {
	opts := []registry4.ClientOption{
		registry4.ClientOptDebug(f.cfg.Settings.Debug),
		registry4.ClientOptEnableCache(true),
		registry4.ClientOptWriter(f.cfg.Out),
		registry4.ClientOptCredentialsFile(f.cfg.Settings.RegistryConfig),
		registry4.ClientOptBasicAuth(c.Username, c.Password),
	}
	switch {
	case c.usesTLSFiles():
		hc, err := c.tlsHTTPClient()
		if err != nil {
			return nil, err
		}
		opts = append(opts, registry4.ClientOptHTTPClient(hc))
	case c.PlainHTTP:
		opts = append(opts, registry4.ClientOptPlainHTTP())
	}
	return registry4.NewClient(opts...)
}

// chartPath4 are c's chart flags as Helm 4's ChartPathOptions.
func chartPath4(c Chart) action.ChartPathOptions {
	v := c.Version
	if v == "" && c.Devel {
		v = ">0.0.0-0"
	}
	return action.ChartPathOptions{CaFile: c.CaFile, CertFile: c.CertFile, KeyFile: c.KeyFile,
		InsecureSkipTLSVerify: c.InsecureSkipTLSVerify, PlainHTTP: c.PlainHTTP, Keyring: c.Keyring,
		Password: c.Password, PassCredentialsAll: c.PassCredentialsAll, RepoURL: c.RepoURL,
		Username: c.Username, Verify: c.Verify, Version: v}
}

// loadChart locates ref with cpo, merges the values and loads the chart,
// updating its dependencies with c.DependencyUpdate, as helm 4 does
// before an install or upgrade.
func (f *face4) loadChart(cpo *action.ChartPathOptions, ref string, c Chart, vo values.Options, rc *registry4.Client) (chart.Charter, chart.Accessor, map[string]any, error) {
	s := f.cfg.Settings
	path, err := cpo.LocateChart(ref, s)
	if err != nil {
		return nil, nil, nil, err
	}
	providers := getter.All(s)
	vals, err := vo.MergeValues(providers)
	if err != nil {
		return nil, nil, nil, err
	}
	ch, err := loader.Load(path)
	if err != nil {
		return nil, nil, nil, err
	}
	ac, err := chart.NewDefaultAccessor(ch)
	if err != nil {
		return nil, nil, nil, err
	}
	if req := ac.MetaDependencies(); len(req) > 0 {
		if err := action.CheckDependencies(ch, req); err != nil {
			if !c.DependencyUpdate {
				return nil, nil, nil, errDependencies(4, err)
			}
			man := &downloader.Manager{Out: f.cfg.Out, ChartPath: path, Keyring: cpo.Keyring, Getters: providers,
				RepositoryConfig: s.RepositoryConfig, RepositoryCache: s.RepositoryCache, ContentCache: s.ContentCache,
				Debug: s.Debug, RegistryClient: rc}
			if err := man.Update(); err != nil {
				return nil, nil, nil, err
			}
			if ch, err = loader.Load(path); err != nil {
				return nil, nil, nil, fmt.Errorf("failed reloading chart after repo update: %w", err)
			}
			if ac, err = chart.NewDefaultAccessor(ch); err != nil {
				return nil, nil, nil, err
			}
		}
	}
	if ac.Deprecated() {
		slog.New(f.log).Warn("this chart is deprecated")
	}
	return ch, ac, vals, nil
}

// postRenderer4 is d's post-renderer: a postrenderer plugin, for Helm 4.
func (f *face4) postRenderer4(d Deploy) (postrenderer.PostRenderer, error) {
	if d.PostRenderer == "" {
		return nil, nil
	}
	return postrenderer.NewPostRendererPlugin(f.cfg.Settings, d.PostRenderer, d.PostRendererArgs...)
}

// fromReleaser is r in both forms (Helm 4's own), nil for nil.
func fromReleaser(r ri.Releaser) (*Release, error) {
	switch v := r.(type) {
	case nil:
		return nil, nil
	case *rspb.Release:
		if v == nil {
			return nil, nil
		}
		return &Release{Release: v, native: v}, nil
	case rspb.Release:
		return &Release{Release: &v, native: &v}, nil
	}
	return nil, fmt.Errorf("unsupported release type: %T", r)
}

// isUninstalled4 reports whether the last of versions is uninstalled.
func isUninstalled4(versions []ri.Releaser) bool {
	if len(versions) == 0 {
		return false
	}
	r, err := fromReleaser(versions[len(versions)-1])
	return err == nil && r != nil && r.Info != nil && r.Info.Status == rcommon.StatusUninstalled
}
