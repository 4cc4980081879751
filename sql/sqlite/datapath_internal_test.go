package sqlite

import (
	"testing"

	helm3path "helm.sh/helm/v3/pkg/helmpath"
	helm4path "helm.sh/helm/v4/pkg/helmpath"
)

// The default database lives where Helm 3 and Helm 4 both keep their data
// (the package links neither, so that a tool of one Helm does not link the
// other's): the same path as theirs whatever the environment says.
func TestHelmDataPathIsHelms(t *testing.T) {
	for _, env := range []map[string]string{
		{"HELM_DATA_HOME": "", "XDG_DATA_HOME": "", "HOME": "/home/u"},
		{"HELM_DATA_HOME": "/data/helm", "XDG_DATA_HOME": "/xdg", "HOME": "/home/u"},
		{"HELM_DATA_HOME": "", "XDG_DATA_HOME": "/xdg", "HOME": "/home/u"},
		{"HELM_DATA_HOME": "rel/dir", "XDG_DATA_HOME": "", "HOME": "/home/u"},
		{"HELM_DATA_HOME": "", "XDG_DATA_HOME": "", "HOME": ""},
	} {
		for k, v := range env {
			t.Setenv(k, v)
		}
		got := helmDataPath("helmstore.db")
		if h3, h4 := helm3path.DataPath("helmstore.db"), helm4path.DataPath("helmstore.db"); got != h3 || got != h4 {
			t.Errorf("env %v: helmDataPath = %q; Helm 3 says %q, Helm 4 %q", env, got, h3, h4)
		}
	}
}
