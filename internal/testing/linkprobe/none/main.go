// Command none is a store-opening program that imports no SQL dialect: the base every other probe adds to.
package main

import (
	"github.com/helmstore/helmstore/internal/testing/linkprobe"
)

func main() { linkprobe.Main() }
