package driver

import (
	"reflect"
	"testing"
)

func TestChunksJoin(t *testing.T) {
	t.Parallel()
	data := make([]byte, 1000)
	for i := range data {
		data[i] = byte(i)
	}
	for _, max := range []int{0, 1, 7, 999, 1000, 1001} {
		cs := Chunks(data, max)
		for _, c := range cs {
			if max > 0 && len(c) > max {
				t.Fatalf("chunk of %d > %d", len(c), max)
			}
		}
		if got := join(cs); !reflect.DeepEqual(got, data) {
			t.Fatalf("max %d: join differs", max)
		}
	}
}
