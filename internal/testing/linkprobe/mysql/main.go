// Command mysql is a store-opening program that imports only the mysql dialect.
package main

import (
	"github.com/helmstore/helmstore/internal/testing/linkprobe"
	_ "github.com/helmstore/helmstore/sql/mysql"
)

func main() { linkprobe.Main() }
