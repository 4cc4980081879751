package crsplit

import (
	"bytes"
	_ "embed"
	"fmt"

	rbacv1 "k8s.io/api/rbac/v1"
	"sigs.k8s.io/yaml"
)

//go:embed manifests/rbac.yaml
var rbacYAML []byte

// RBACName is the name of the Role and ClusterRole crsplit ships.
const RBACName = "helmstore-crsplit"

// RBACManifests returns the YAML of a Role and a ClusterRole, both named
// helmstore-crsplit, granting exactly what the backend needs: the Role for
// one namespace, the ClusterRole for a RoleBinding in each namespace or a
// ClusterRoleBinding (listing releases across all namespaces needs one).
func RBACManifests() []byte { return bytes.Clone(rbacYAML) }

// RBAC returns the Role and ClusterRole of RBACManifests, parsed. The Role
// has no namespace: set it before creating it.
func RBAC() (*rbacv1.Role, *rbacv1.ClusterRole, error) {
	var role *rbacv1.Role
	var cluster *rbacv1.ClusterRole
	for _, doc := range yamlDocuments(rbacYAML) {
		var kind struct{ Kind string }
		if err := yaml.Unmarshal(doc, &kind); err != nil {
			return nil, nil, fmt.Errorf("embedded RBAC: %w", err)
		}
		var err error
		switch kind.Kind {
		case "Role":
			role = new(rbacv1.Role)
			err = yaml.UnmarshalStrict(doc, role)
		case "ClusterRole":
			cluster = new(rbacv1.ClusterRole)
			err = yaml.UnmarshalStrict(doc, cluster)
		default:
			err = fmt.Errorf("unexpected kind %q", kind.Kind)
		}
		if err != nil {
			return nil, nil, fmt.Errorf("embedded RBAC: %w", err)
		}
	}
	if role == nil || cluster == nil {
		return nil, nil, fmt.Errorf("embedded RBAC lacks a Role or a ClusterRole")
	}
	return role, cluster, nil
}
