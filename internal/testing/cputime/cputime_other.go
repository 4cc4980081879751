//go:build !unix

package cputime

func used() int64 { return 0 }
