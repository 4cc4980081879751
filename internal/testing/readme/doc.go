// Package readme keeps the Go snippets of README.md and docs/*.md honest.
// Each ```go block of those files is a whole program kept in a directory
// here (named by the <!-- snippet: ... --> line above the block), so it is
// type-checked by go vet ./... like any other package; readme_test.go checks
// that every block is byte for byte the program it names, that each program
// is shown exactly once, and that the programs build. It also keeps README.md
// short: at most 150 lines, with the two commands and the driver table in its
// first 40.
package readme
