package helm3_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/helmstore/helmstore/helm3"
)

// Remove what writers that died or lost the answers of their writes left
// behind, in every namespace (the "" view): after a crash, after writes
// failed with helm3.ErrUnavailable, or on a schedule. It is safe while
// others read and write; on a store whose backend leaves no garbage (SQLite
// here) it does nothing.
func ExampleCollect() {
	dir, _ := os.MkdirTemp("", "example")
	defer os.RemoveAll(dir)
	store, err := helm3.Open(context.Background(), "sqlite", filepath.Join(dir, "helm.db"))
	if err != nil {
		fmt.Println(err)
		return
	}
	defer store.Close()

	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	if err := helm3.Collect(ctx, store.Namespace("")); err != nil {
		fmt.Println("collect:", err) // what it removed stays removed: run it again later
		return
	}
	fmt.Println("collected")
	// Output: collected
}
