package lifecycle

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"

	action3 "helm.sh/helm/v3/pkg/action"
	chart3 "helm.sh/helm/v3/pkg/chart"
	loader3 "helm.sh/helm/v3/pkg/chart/loader"
	cli3 "helm.sh/helm/v3/pkg/cli"
	values3 "helm.sh/helm/v3/pkg/cli/values"
	downloader3 "helm.sh/helm/v3/pkg/downloader"
	getter3 "helm.sh/helm/v3/pkg/getter"
	kube3 "helm.sh/helm/v3/pkg/kube"
	postrender3 "helm.sh/helm/v3/pkg/postrender"
	registry3 "helm.sh/helm/v3/pkg/registry"
	release3 "helm.sh/helm/v3/pkg/release"
	"helm.sh/helm/v4/pkg/cli"
	rspb "helm.sh/helm/v4/pkg/release/v1"

	"github.com/helmstore/helmstore/helm3"
	"github.com/helmstore/helmstore/internal/registry"
)

// face3 is Helm 3's lifecycle: helm.sh/helm/v3/pkg/action on the helm3
// face of the store (or Helm 3's own driver).
type face3 struct {
	cfg      Config
	settings *cli3.EnvSettings
	store    helm3.Store // nil for Helm's own drivers
}

func newFace3(ctx context.Context, cfg Config) (*face3, error) {
	// Objects are managed by "helm", as by the helm binary, so that helm
	// and helmstore can take turns on a release.
	kube3.ManagedFieldsManager = "helm"
	f := &face3{cfg: cfg, settings: settings3(cfg.Settings)}
	if registry.IsHelmDriver(cfg.Driver) {
		setHelmSQLConnection(cfg)
		return f, nil
	}
	s, err := helm3.Open(ctx, cfg.Driver, connection(cfg), helm3.WithRESTClientGetter(cfg.Settings.RESTClientGetter()), helm3.WithLog(cfg.debugf))
	if err != nil {
		return nil, err
	}
	f.store = s
	return f, nil
}

func (f *face3) close() error {
	if f.store == nil {
		return nil
	}
	return f.store.Close()
}

// settings3 are Helm 3's settings carrying what s holds.
func settings3(s *cli.EnvSettings) *cli3.EnvSettings {
	o := cli3.New()
	o.KubeConfig, o.KubeContext, o.KubeToken = s.KubeConfig, s.KubeContext, s.KubeToken
	o.KubeAsUser, o.KubeAsGroups, o.KubeAPIServer = s.KubeAsUser, s.KubeAsGroups, s.KubeAPIServer
	o.KubeCaFile, o.KubeInsecureSkipTLSVerify, o.KubeTLSServerName = s.KubeCaFile, s.KubeInsecureSkipTLSVerify, s.KubeTLSServerName
	o.Debug, o.MaxHistory, o.BurstLimit, o.QPS = s.Debug, s.MaxHistory, s.BurstLimit, s.QPS
	o.RegistryConfig, o.RepositoryConfig, o.RepositoryCache = s.RegistryConfig, s.RepositoryConfig, s.RepositoryCache
	o.PluginsDirectory = s.PluginsDirectory
	o.SetNamespace(s.Namespace())
	return o
}

// configuration is an action configuration for namespace ns on the store.
func (f *face3) configuration(ns string) (*action3.Configuration, error) {
	ac := new(action3.Configuration)
	getter := f.cfg.Settings.RESTClientGetter()
	var err error
	if f.store == nil {
		err = ac.Init(getter, ns, f.cfg.Driver, f.cfg.debugf)
	} else {
		err = helm3.Configure(ac, getter, ns, f.store, f.cfg.debugf)
	}
	if err != nil {
		return nil, err
	}
	ac.SetHookOutputFunc(func(_, _, _ string) io.Writer { return f.cfg.Log })
	return ac, nil
}

// registryClient is the OCI registry client for c, as helm 3 makes it.
func (f *face3) registryClient(c Chart) (*registry3.Client, error) {
	opts := []registry3.ClientOption{
		registry3.ClientOptDebug(f.settings.Debug),
		registry3.ClientOptEnableCache(true),
		registry3.ClientOptWriter(f.cfg.Log),
		registry3.ClientOptCredentialsFile(f.settings.RegistryConfig),
		registry3.ClientOptBasicAuth(c.Username, c.Password),
	}
	switch {
	case c.usesTLSFiles():
		hc, err := c.tlsHTTPClient()
		if err != nil {
			return nil, err
		}
		opts = append(opts, registry3.ClientOptHTTPClient(hc))
	case c.PlainHTTP:
		opts = append(opts, registry3.ClientOptPlainHTTP())
	}
	return registry3.NewClient(opts...)
}

// chartPath3 are c's chart flags as Helm 3's ChartPathOptions.
func chartPath3(c Chart) action3.ChartPathOptions {
	v := c.Version
	if v == "" && c.Devel {
		v = ">0.0.0-0"
	}
	return action3.ChartPathOptions{CaFile: c.CaFile, CertFile: c.CertFile, KeyFile: c.KeyFile,
		InsecureSkipTLSverify: c.InsecureSkipTLSVerify, PlainHTTP: c.PlainHTTP, Keyring: c.Keyring,
		Password: c.Password, PassCredentialsAll: c.PassCredentialsAll, RepoURL: c.RepoURL,
		Username: c.Username, Verify: c.Verify, Version: v}
}

// loadChart locates ref with cpo, merges the values and loads the chart,
// updating its dependencies with c.DependencyUpdate, as helm 3 does
// before an install or upgrade.
func (f *face3) loadChart(cpo *action3.ChartPathOptions, ref string, c Chart, vo values3.Options, rc *registry3.Client) (*chart3.Chart, map[string]any, error) {
	path, err := cpo.LocateChart(ref, f.settings)
	if err != nil {
		return nil, nil, err
	}
	f.cfg.debugf("CHART PATH: %s\n", path)
	providers := getter3.All(f.settings)
	vals, err := vo.MergeValues(providers)
	if err != nil {
		return nil, nil, err
	}
	ch, err := loader3.Load(path)
	if err != nil {
		return nil, nil, err
	}
	if req := ch.Metadata.Dependencies; req != nil {
		if err := action3.CheckDependencies(ch, req); err != nil {
			if !c.DependencyUpdate {
				return nil, nil, errDependencies(3, err)
			}
			man := &downloader3.Manager{Out: f.cfg.Out, ChartPath: path, Keyring: cpo.Keyring, Getters: providers,
				RepositoryConfig: f.settings.RepositoryConfig, RepositoryCache: f.settings.RepositoryCache,
				Debug: f.settings.Debug, RegistryClient: rc}
			if err := man.Update(); err != nil {
				return nil, nil, err
			}
			if ch, err = loader3.Load(path); err != nil {
				return nil, nil, fmt.Errorf("failed reloading chart after repo update: %w", err)
			}
		}
	}
	return ch, vals, nil
}

// postRenderer3 is d's post-renderer: an executable, for Helm 3.
func postRenderer3(d Deploy) (postrender3.PostRenderer, error) {
	if d.PostRenderer == "" {
		return nil, nil
	}
	return postrender3.NewExec(d.PostRenderer, d.PostRendererArgs...)
}

// dryRun3 is d's dry-run option as Helm 3 spells it ("none" when unset).
func dryRun3(d string) string {
	if d == "" {
		return DryRunNone
	}
	return d
}

// errDryRun3 is Helm 3's error for a --dry-run value it does not know.
//
//lint:ignore ST1005 Helm 3's own message, printed as helm prints it
var errDryRun3 = errors.New("Invalid dry-run flag. Flag must one of the following: false, true, none, client, server")

// checkDryRun3 refuses a dry-run option Helm 3 does not know.
func checkDryRun3(d string) error {
	if !slices.Contains([]string{"false", "true", "none", "client", "server"}, d) {
		return errDryRun3
	}
	return nil
}

// isUninstalled3 reports whether the last of versions is uninstalled.
func isUninstalled3(versions []*release3.Release) bool {
	return len(versions) > 0 && versions[len(versions)-1].Info.Status == release3.StatusUninstalled
}

// fromRelease3 is r with its Helm 4 form, nil for nil.
func fromRelease3(r *release3.Release) (*Release, error) {
	if r == nil {
		return nil, nil
	}
	b, err := json.Marshal(r)
	if err != nil {
		return nil, err
	}
	v4 := new(rspb.Release)
	if err := json.Unmarshal(b, v4); err != nil {
		return nil, err
	}
	v4.Labels = r.Labels
	return &Release{Release: v4, native: r}, nil
}

// connection is cfg's connection string, else the environment's.
func connection(cfg Config) string {
	if cfg.Connection != "" {
		return cfg.Connection
	}
	return registry.ConnectionStringFromEnv(cfg.Driver)
}

// setHelmSQLConnection hands a connection string given for Helm's own
// sql driver to it: that driver reads it from the environment only.
func setHelmSQLConnection(cfg Config) {
	if cfg.Driver == "sql" && cfg.Connection != "" {
		os.Setenv("HELM_DRIVER_SQL_CONNECTION_STRING", cfg.Connection)
	}
}

// values3Of are d's values flags as Helm 3's values.Options.
func values3Of(d Deploy) values3.Options {
	v := d.Values
	return values3.Options{ValueFiles: v.ValueFiles, StringValues: v.StringValues, Values: v.Values,
		FileValues: v.FileValues, JSONValues: v.JSONValues, LiteralValues: v.LiteralValues}
}
