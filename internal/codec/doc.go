// Package codec is the engine's byte codec, neutral as to Helm's version: it
// knows no Helm type. A face's codec (internal/helm3codec for Helm 3) takes
// a release apart into the neutral form this package defines, Meta (what the
// engine checks and indexes) and Split (the head's JSON and its chart,
// values and manifest parts), and this package turns that form into stored
// bytes and back.
//
// Each part has a canonical uncompressed form whose SHA-256 is its digest,
// its first byte its Kind. The values and manifest parts are encoded here
// (ValuesPart, ManifestPart), and so is the chart part (chart.go): a face
// describes its Helm's chart as ChartFields to EncodeChart and builds one
// from what DecodeChart gives (Chart, on a ChartShare), so that every face
// writes one chart as one string of bytes. A decoded chart reaches the
// engine as a face's ChartPart through a ChartDecoder. Parts are stored as
// frames: one byte naming the encoding, then the payload (zstd when that
// saves space, in independent segments for a large part, or a delta against
// a base part of the same kind: delta.go). Every decode verifies the digest
// and the size limits (driver.MaxPartBytes, driver.MaxHeadBytes) before it
// allocates, so a corrupted or hostile part is reported as
// driver.ErrCorrupt, never returned. The head's body is sealed over its key
// and part digests by package driver (Head.Seal); OpenHead checks the seal
// and returns the head's JSON.
package codec
