// Command all is a store-opening program that imports package sql, so all three dialects.
package main

import (
	"github.com/helmstore/helmstore/internal/testing/linkprobe"
	_ "github.com/helmstore/helmstore/sql"
)

func main() { linkprobe.Main() }
