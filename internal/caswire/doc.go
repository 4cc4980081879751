// Package caswire holds the names package cas gives the objects it stores:
// chunk names, label names and kinds, shared by cas and by the tests that
// read or damage stored objects.
package caswire
