// Package readme keeps README.md's Go snippets honest. Each ```go block of
// the README is a whole program kept in a directory here (named by the
// <!-- snippet: ... --> line above the block), so it is type-checked by
// go vet ./... like any other package; readme_test.go checks that every block
// is byte for byte the program it names and that the programs build.
package readme
