package drivertest

import (
	"fmt"
	"io"
	"sort"
	"testing"

	"helm.sh/helm/v3/pkg/action"
	"helm.sh/helm/v3/pkg/chart"
	"helm.sh/helm/v3/pkg/chartutil"
	kubefake "helm.sh/helm/v3/pkg/kube/fake"
	"helm.sh/helm/v3/pkg/storage"
	helmdriver "helm.sh/helm/v3/pkg/storage/driver"
)

// actions3 runs the action flows' steps through Helm 3's action package
// over d.
type actions3 struct{ d helmdriver.Driver }

// config is a Helm 3 action configuration over the driver with a fake
// Kubernetes client, as Helm's own action tests use.
func (a actions3) config() *action.Configuration {
	return &action.Configuration{
		Releases:     storage.Init(a.d),
		KubeClient:   &kubefake.PrintingKubeClient{Out: io.Discard},
		Capabilities: chartutil.DefaultCapabilities,
		Log:          func(string, ...interface{}) {},
	}
}

func (a actions3) install(name, ns string, ch *chart.Chart, vals map[string]interface{}) error {
	i := action.NewInstall(a.config())
	i.ReleaseName, i.Namespace = name, ns
	_, err := i.Run(ch, vals)
	return err
}

func (a actions3) upgrade(name, ns string, ch *chart.Chart, vals map[string]interface{}, maxHistory int) error {
	u := action.NewUpgrade(a.config())
	u.Namespace, u.MaxHistory = ns, maxHistory
	_, err := u.Run(name, ch, vals)
	return err
}

func (a actions3) rollback(name string, version, maxHistory int) error {
	r := action.NewRollback(a.config())
	r.Version, r.MaxHistory = version, maxHistory
	return r.Run(name)
}

func (a actions3) uninstall(name string, keepHistory bool) error {
	u := action.NewUninstall(a.config())
	u.KeepHistory = keepHistory
	_, err := u.Run(name)
	return err
}

func (a actions3) listAll() ([]string, error) {
	l := action.NewList(a.config())
	l.AllNamespaces, l.StateMask = true, action.ListAll
	rs, err := l.Run()
	var out []string
	for _, r := range rs {
		out = append(out, fmt.Sprintf("%s/%s v%d %s", r.Namespace, r.Name, r.Version, r.Info.Status))
	}
	return out, err
}

func (a actions3) history(name string) (int, error) {
	rs, err := action.NewHistory(a.config()).Run(name)
	return len(rs), err
}

func (a actions3) stored(t *testing.T) []string {
	t.Helper()
	var out []string
	for _, r := range allReleases(t, a.d.Name(), a.d) {
		out = append(out, flowLine(t, r))
	}
	sort.Strings(out)
	return out
}
