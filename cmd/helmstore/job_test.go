package main_test

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	batchv1 "k8s.io/api/batch/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"sigs.k8s.io/yaml"

	"github.com/helmstore/helmstore/internal/testing/testenv/kubeenv"
	"github.com/helmstore/helmstore/internal/testing/testenv/sqlenv"
	"github.com/helmstore/helmstore/migrate"
)

// TestJobExample creates the objects of examples/job/job.yaml on the test
// API server with a server-side dry run (so the API server validates
// them), then runs the Job's container command with its environment (the
// connection string the Secret would hold, the chart repository the
// fixture serves, the admin's kubeconfig for the in-cluster credentials)
// and checks that the release it installs is in postgres with the values
// the command sets.
func TestJobExample(t *testing.T) {
	const ns = "web"
	k := kubeenv.Kube(t)
	namespace(t, k, ns)
	pg := sqlenv.Postgres(t)
	fx := newLifecycleFixture(t)
	raw, err := os.ReadFile(filepath.Join("..", "..", "examples", "job", "job.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	dyn, err := dynamic.NewForConfig(k.Config(kubeenv.Admin))
	if err != nil {
		t.Fatal(err)
	}
	resources := map[string]schema.GroupVersionResource{
		"ServiceAccount": {Version: "v1", Resource: "serviceaccounts"},
		"RoleBinding":    {Group: "rbac.authorization.k8s.io", Version: "v1", Resource: "rolebindings"},
		"Job":            {Group: "batch", Version: "v1", Resource: "jobs"},
	}
	var job batchv1.Job
	for _, doc := range bytes.Split(raw, []byte("\n---\n")) {
		var u unstructured.Unstructured
		if err := yaml.Unmarshal(doc, &u.Object); err != nil {
			t.Fatal(err)
		}
		gvr, ok := resources[u.GetKind()]
		if !ok {
			t.Fatalf("examples/job/job.yaml: unexpected kind %q", u.GetKind())
		}
		if _, err := dyn.Resource(gvr).Namespace(u.GetNamespace()).Create(ctx(t), &u, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}}); err != nil {
			t.Errorf("%s %s: server-side dry run: %v", u.GetKind(), u.GetName(), err)
		}
		if u.GetKind() == "Job" {
			if err := yaml.Unmarshal(doc, &job); err != nil {
				t.Fatal(err)
			}
		}
	}
	c := job.Spec.Template.Spec.Containers[0]
	if c.Command[0] != "helmstore" {
		t.Fatalf("the Job runs %q, not helmstore", c.Command[0])
	}
	args := c.Command[1:]
	for i, a := range args {
		if strings.HasPrefix(a, "https://charts.example/") {
			args[i] = fx.repoURL
		}
	}
	cmd := exec.Command(bin, args...)
	home := t.TempDir()
	cmd.Env = append(os.Environ(), "HELM_DRIVER=", "KUBECONFIG="+k.Kubeconfig, "HELM_KUBECONTEXT="+kubeenv.Admin)
	for _, e := range c.Env {
		v := e.Value
		switch {
		case e.Name == "HELM_DRIVER_POSTGRES_CONNECTION_STRING":
			v = pg
		case e.Name == "HELM_NAMESPACE":
			v = job.Namespace
		case strings.HasPrefix(v, "/tmp/helm/"):
			v = filepath.Join(home, strings.TrimPrefix(v, "/tmp/helm/"))
		}
		cmd.Env = append(cmd.Env, e.Name+"="+v)
	}
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("the Job's command: %v\n%s", err, out)
	}
	t.Logf("the Job's helmstore %s:\n%s", strings.Join(args, " "), out)
	s, err := migrate.Open(ctx(t), "postgres", pg, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	rel, err := s.Get(ctx(t), migrate.Revision{Namespace: ns, Name: "web", Version: 1})
	if err != nil {
		t.Fatalf("the release the Job installed: %v", err)
	}
	if rel.Config["greeting"] != "from-a-job" || rel.Chart.Metadata.Version != "0.2.0" || rel.ApplyMethod != "ssa" {
		t.Errorf("the Job installed %s %s with %v (apply %q), want demo 0.2.0, greeting=from-a-job, server-side apply", rel.Name, rel.Chart.Metadata.Version, rel.Config, rel.ApplyMethod)
	}
}
