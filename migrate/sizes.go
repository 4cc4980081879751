package migrate

import (
	"context"
	"sync"

	apiv1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	corev1 "k8s.io/client-go/kubernetes/typed/core/v1"
)

// sizes records the size of the release data of the Secrets and ConfigMaps
// Helm's drivers read and write through this process, by namespace and
// name: what Helm stores of each revision, known without encoding it again.
type sizes struct {
	m sync.Map // [2]string{namespace, name} -> int64
}

func (s *sizes) note(ns, name string, n int) { s.m.Store([2]string{ns, name}, int64(n)) }

// total is the size recorded of namespace ns's objects ("": every one).
func (s *sizes) total(ns string) int64 {
	var n int64
	s.m.Range(func(k, v any) bool {
		if ns == "" || k.([2]string)[0] == ns {
			n += v.(int64)
		}
		return true
	})
	return n
}

// secretSizes is a Secrets client that records the release data's size of
// every Secret it reads or writes.
type secretSizes struct {
	corev1.SecretInterface
	ns    string
	sizes *sizes
}

func (c secretSizes) note(s *apiv1.Secret) {
	if s != nil {
		c.sizes.note(c.ns, s.Name, len(s.Data["release"]))
	}
}

func (c secretSizes) Get(ctx context.Context, name string, opts metav1.GetOptions) (*apiv1.Secret, error) {
	s, err := c.SecretInterface.Get(ctx, name, opts)
	c.note(s)
	return s, err
}

func (c secretSizes) Create(ctx context.Context, s *apiv1.Secret, opts metav1.CreateOptions) (*apiv1.Secret, error) {
	out, err := c.SecretInterface.Create(ctx, s, opts)
	if err == nil {
		c.note(s)
	}
	return out, err
}

func (c secretSizes) Update(ctx context.Context, s *apiv1.Secret, opts metav1.UpdateOptions) (*apiv1.Secret, error) {
	out, err := c.SecretInterface.Update(ctx, s, opts)
	if err == nil {
		c.note(s)
	}
	return out, err
}

func (c secretSizes) Delete(ctx context.Context, name string, opts metav1.DeleteOptions) error {
	err := c.SecretInterface.Delete(ctx, name, opts)
	if err == nil {
		c.sizes.m.Delete([2]string{c.ns, name})
	}
	return err
}

// configMapSizes is secretSizes for ConfigMaps.
type configMapSizes struct {
	corev1.ConfigMapInterface
	ns    string
	sizes *sizes
}

func (c configMapSizes) note(m *apiv1.ConfigMap) {
	if m != nil {
		c.sizes.note(c.ns, m.Name, len(m.Data["release"]))
	}
}

func (c configMapSizes) Get(ctx context.Context, name string, opts metav1.GetOptions) (*apiv1.ConfigMap, error) {
	m, err := c.ConfigMapInterface.Get(ctx, name, opts)
	c.note(m)
	return m, err
}

func (c configMapSizes) Create(ctx context.Context, m *apiv1.ConfigMap, opts metav1.CreateOptions) (*apiv1.ConfigMap, error) {
	out, err := c.ConfigMapInterface.Create(ctx, m, opts)
	if err == nil {
		c.note(m)
	}
	return out, err
}

func (c configMapSizes) Update(ctx context.Context, m *apiv1.ConfigMap, opts metav1.UpdateOptions) (*apiv1.ConfigMap, error) {
	out, err := c.ConfigMapInterface.Update(ctx, m, opts)
	if err == nil {
		c.note(m)
	}
	return out, err
}

func (c configMapSizes) Delete(ctx context.Context, name string, opts metav1.DeleteOptions) error {
	err := c.ConfigMapInterface.Delete(ctx, name, opts)
	if err == nil {
		c.sizes.m.Delete([2]string{c.ns, name})
	}
	return err
}
