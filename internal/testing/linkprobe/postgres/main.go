// Command postgres is a store-opening program that imports only the postgres dialect.
package main

import (
	"github.com/helmstore/helmstore/internal/testing/linkprobe"
	_ "github.com/helmstore/helmstore/sql/postgres"
)

func main() { linkprobe.Main() }
