package crsplit

import (
	"context"
	"fmt"
	"sort"
	"strings"

	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/helmstore/helmstore/helm3"
	"github.com/helmstore/helmstore/internal/enginetmp"
)

// DriverName is the HELM_DRIVER name crsplit registers.
const DriverName = "crsplit"

func init() { helm3.Register(DriverName, open) }

// open is the helm3.Opener: the cluster is the one cfg.RESTClientGetter
// points at (Helm's kubeconfig, context and namespace flags), and a
// non-empty connection string names a kubeconfig context to use instead of
// the current one.
func open(ctx context.Context, cfg *helm3.Config) (helm3.Store, error) {
	rc, err := restConfig(cfg.RESTClientGetter, cfg.ConnectionString)
	if err != nil {
		return nil, err
	}
	return newStore(ctx, rc, cfg)
}

// Open returns a crsplit Store on the cluster rc points at, scoped to
// helm3.DefaultNamespace (use Namespace for others). It checks that the
// cluster serves the helmstore.io resources (ErrCRDsNotInstalled if not).
// helm3.Open(ctx, "crsplit", "", helm3.WithRESTClientGetter(g)) does the
// same from a RESTClientGetter. opts start from the same defaults as
// helm3.Open's (helm3.NewConfig).
func Open(ctx context.Context, rc *rest.Config, opts ...helm3.Option) (helm3.Store, error) {
	return newStore(ctx, rc, helm3.NewConfig(DriverName, "", opts...))
}

// newStore opens the store on rc; cfg comes from helm3.NewConfig (Log set).
// Opening is bounded by cfg.Timeout, as every operation of the store is: an
// API server that stops answering fails Open with helm3.ErrUnavailable
// within it.
func newStore(ctx context.Context, rc *rest.Config, cfg *helm3.Config) (helm3.Store, error) {
	if cfg.Timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, cfg.Timeout)
		defer cancel()
	}
	c, err := newClient(rc)
	if err != nil {
		return nil, err
	}
	have, err := c.resources(ctx)
	if err != nil {
		return nil, err
	}
	var missing []string
	for _, r := range allResources {
		if !have[r] {
			missing = append(missing, r)
		}
	}
	if len(missing) > 0 {
		sort.Strings(missing)
		return nil, fmt.Errorf("%w: missing %s", ErrCRDsNotInstalled, strings.Join(missing, ", "))
	}
	return backend.New(newBackend(c, cfg.Log, cfg.Timeout), cfg), nil
}

// restConfig returns the client configuration of getter, or of the default
// kubeconfig loading rules (KUBECONFIG, ~/.kube/config, in-cluster) when
// getter is nil; context, when set, replaces the current context.
func restConfig(getter genericclioptions.RESTClientGetter, context string) (*rest.Config, error) {
	if getter == nil {
		rules := clientcmd.NewDefaultClientConfigLoadingRules()
		cc := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(rules, &clientcmd.ConfigOverrides{CurrentContext: context})
		rc, err := cc.ClientConfig()
		if err != nil {
			return nil, fmt.Errorf("kubernetes client configuration: %w", err)
		}
		return rc, nil
	}
	if context == "" {
		rc, err := getter.ToRESTConfig()
		if err != nil {
			return nil, fmt.Errorf("kubernetes client configuration: %w", err)
		}
		return rc, nil
	}
	raw, err := getter.ToRawKubeConfigLoader().RawConfig()
	if err != nil {
		return nil, fmt.Errorf("kubeconfig: %w", err)
	}
	if _, ok := raw.Contexts[context]; !ok {
		return nil, fmt.Errorf("kubeconfig has no context %q (the crsplit connection string names a context)", context)
	}
	rc, err := clientcmd.NewNonInteractiveClientConfig(raw, context, &clientcmd.ConfigOverrides{}, nil).ClientConfig()
	if err != nil {
		return nil, fmt.Errorf("kubernetes client configuration for context %q: %w", context, err)
	}
	return rc, nil
}
