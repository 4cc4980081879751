package castest

import (
	"context"

	"github.com/helmstore/helmstore/cas"
	"github.com/helmstore/helmstore/internal/caswire"
)

// NoPending is an object store that drops the pending label of every head
// it creates, so that a head is visible before its parts are stored: a
// protocol broken on purpose, which the crash-point runs must catch (the
// protocol's atomicity rests on that label).
type NoPending struct{ cas.ObjectStore }

// Create creates obj, without caswire.LabelPending if it is a head.
func (s NoPending) Create(ctx context.Context, obj *cas.Object) (*cas.Object, error) {
	if obj.Kind == cas.KindHead {
		c := *obj
		c.Labels = map[string]string{}
		for k, v := range obj.Labels {
			if k != caswire.LabelPending {
				c.Labels[k] = v
			}
		}
		obj = &c
	}
	return s.ObjectStore.Create(ctx, obj)
}
