// Package helm3codec is the one place Helm 3's types meet the engine: its
// Codec is the engine.Codec of *release.Release, which package helm3 gives
// the engine. Meta reads what the engine checks and indexes of a release;
// Split takes it apart into the neutral form of package codec (the head's
// JSON, without chart, values, manifest and labels, and its parts);
// Assemble puts a release back together from that form; Stub stands for a
// release whose stored data cannot be decoded.
//
// The chart encoding is here because it is Helm 3's chart.Chart written
// out (chart.go documents the format): binary, so that its cost is in
// proportion to its bytes, not to its number of files or values, and
// keeping exactly what Helm's JSON round trip of a chart keeps. What
// Assemble returns deep-equals what Helm's own drivers return for the same
// release. A decoded chart part (ChartPart) is immutable and shared through
// the part cache; the releases of one call share its values and file bytes
// (Shared), as Helm's Memory driver returns shared objects.
package helm3codec
