// Command all is a store-opening program that imports package sql, so all three dialects.
package main

import (
	_ "github.com/helmstore/helmstore/sql"
	"github.com/helmstore/helmstore/sql/internal/linkprobe"
)

func main() { linkprobe.Main() }
