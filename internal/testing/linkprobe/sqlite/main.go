// Command sqlite is a store-opening program that imports only the sqlite dialect.
package main

import (
	"github.com/helmstore/helmstore/internal/testing/linkprobe"
	_ "github.com/helmstore/helmstore/sql/sqlite"
)

func main() { linkprobe.Main() }
