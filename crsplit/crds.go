package crsplit

import (
	"bytes"
	"context"
	_ "embed"
	"fmt"
	"strings"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apiextensions "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/yaml"
)

//go:embed manifests/crds.yaml
var crdsYAML []byte

// CRDManifests returns the YAML of the helmstore.io custom resource
// definitions (Release, Chart, Values, Manifest, Chunk), for
// `kubectl apply -f -`.
func CRDManifests() []byte { return bytes.Clone(crdsYAML) }

// CRDs returns the custom resource definitions, parsed.
func CRDs() ([]*apiextensionsv1.CustomResourceDefinition, error) {
	var out []*apiextensionsv1.CustomResourceDefinition
	for _, doc := range yamlDocuments(crdsYAML) {
		var crd apiextensionsv1.CustomResourceDefinition
		if err := yaml.UnmarshalStrict(doc, &crd); err != nil {
			return nil, fmt.Errorf("embedded CRD: %w", err)
		}
		out = append(out, &crd)
	}
	return out, nil
}

// yamlDocuments splits a multi-document YAML file, skipping empty ones.
func yamlDocuments(b []byte) [][]byte {
	var out [][]byte
	for _, doc := range strings.Split("\n"+string(b), "\n---") {
		empty := true
		for _, line := range strings.Split(doc, "\n") {
			if t := strings.TrimSpace(line); t != "" && !strings.HasPrefix(t, "#") {
				empty = false
				break
			}
		}
		if !empty {
			out = append(out, []byte(doc))
		}
	}
	return out
}

// InstallCRDs creates the helmstore.io custom resource definitions, or
// updates them to this version's, and waits until the API server has
// established them. It needs permission to manage
// customresourcedefinitions (cluster-admin, typically); the backend itself
// does not.
func InstallCRDs(ctx context.Context, rc *rest.Config) error {
	crds, err := CRDs()
	if err != nil {
		return err
	}
	cs, err := apiextensions.NewForConfig(rc)
	if err != nil {
		return err
	}
	api := cs.ApiextensionsV1().CustomResourceDefinitions()
	for _, crd := range crds {
		cur, err := api.Get(ctx, crd.Name, metav1.GetOptions{})
		switch {
		case apierrors.IsNotFound(err):
			_, err = api.Create(ctx, crd, metav1.CreateOptions{})
		case err == nil:
			cur.Spec = crd.Spec
			if cur.Labels == nil {
				cur.Labels = map[string]string{}
			}
			for k, v := range crd.Labels {
				cur.Labels[k] = v
			}
			_, err = api.Update(ctx, cur, metav1.UpdateOptions{})
		}
		if err != nil {
			return fmt.Errorf("install CRD %s: %w", crd.Name, err)
		}
	}
	for _, crd := range crds {
		for {
			cur, err := api.Get(ctx, crd.Name, metav1.GetOptions{})
			if err != nil {
				return fmt.Errorf("install CRD %s: %w", crd.Name, err)
			}
			if established(cur) {
				break
			}
			select {
			case <-ctx.Done():
				return fmt.Errorf("install CRD %s: not established: %w", crd.Name, ctx.Err())
			case <-time.After(100 * time.Millisecond):
			}
		}
	}
	return nil
}

func established(crd *apiextensionsv1.CustomResourceDefinition) bool {
	var est, names bool
	for _, c := range crd.Status.Conditions {
		switch c.Type {
		case apiextensionsv1.Established:
			est = c.Status == apiextensionsv1.ConditionTrue
		case apiextensionsv1.NamesAccepted:
			names = c.Status == apiextensionsv1.ConditionTrue
		}
	}
	return est && names
}
