// Package codec turns a Helm release into a small head plus content-addressed
// parts (chart, values, manifest) and back.
//
// Each part has a canonical uncompressed form whose SHA-256 is its digest.
// Parts are stored as frames: one byte naming the compression, then the
// payload (zstd when that saves space). Every decode verifies the digest, so
// a corrupted part is reported, never returned.
//
// What Assemble returns deep-equals what Helm's own drivers return for the same
// release: Helm stores a release as JSON, and the chart encoding here keeps
// exactly the information that JSON round trip keeps (see chart.go).
package codec
