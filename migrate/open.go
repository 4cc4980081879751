package migrate

import (
	"context"
	"errors"
	"fmt"
	"os"

	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/metadata"

	"github.com/helmstore/helmstore/helm4"
	"github.com/helmstore/helmstore/internal/registry"
)

// Open opens the store HELM_DRIVER would name name: Helm's own "secret"
// (also "secrets" and ""), "configmap" ("configmaps") and "sql", or a
// registered helmstore backend ("postgres", "crsplit", ...: import its
// package to register it). conn is
// the connection string; "" takes it from the environment as Helm and
// helmstore do (HELM_DRIVER_SQL_CONNECTION_STRING for sql,
// HELM_DRIVER_<NAME>_CONNECTION_STRING for a helmstore backend). getter
// reaches the cluster for Secrets, ConfigMaps and crsplit, as Helm's
// --kubeconfig and --kube-context flags say. Helm's "memory" driver lives
// in one process and is refused.
func Open(ctx context.Context, name, conn string, getter genericclioptions.RESTClientGetter, opts ...helm4.Option) (Store, error) {
	switch name {
	case "secret", "secrets", "", "configmap", "configmaps":
		if getter == nil {
			return nil, fmt.Errorf("%s: no cluster to reach (no kubeconfig)", name)
		}
		rc, err := getter.ToRESTConfig()
		if err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		cs, err := kubernetes.NewForConfig(rc)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		md, err := metadata.NewForConfig(rc)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		if name == "configmap" || name == "configmaps" {
			return kubeStore("configmaps", "configmaps", cs, md), nil
		}
		return kubeStore("secrets", "secrets", cs, md), nil
	case "sql":
		if conn == "" {
			conn = os.Getenv("HELM_DRIVER_SQL_CONNECTION_STRING")
		}
		if conn == "" {
			return nil, errors.New("sql: no connection string (HELM_DRIVER_SQL_CONNECTION_STRING)")
		}
		return sqlStore(conn)
	case "memory":
		return nil, errors.New("memory: Helm's memory driver keeps releases only inside one process; there is nothing to move")
	}
	if err := registry.CheckDriver(name); err != nil {
		return nil, err
	}
	if conn == "" {
		conn = registry.ConnectionStringFromEnv(name)
	}
	if getter != nil {
		opts = append([]helm4.Option{helm4.WithRESTClientGetter(getter)}, opts...)
	}
	s, err := helm4.Open(ctx, name, conn, opts...)
	if err != nil {
		return nil, err
	}
	return FromStore(name, s), nil
}
