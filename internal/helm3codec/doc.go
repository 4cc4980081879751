// Package helm3codec is the one place Helm 3's types meet the engine: its
// Codec is the engine.Codec of *release.Release, which package helm3 gives
// the engine. Meta reads what the engine checks and indexes of a release;
// Split takes it apart into the neutral form of package codec (the head's
// JSON, without chart, values, manifest and labels, and its parts);
// Assemble puts a release back together from that form; Stub stands for a
// release whose stored data cannot be decoded.
//
// The chart part's wire format is package codec's, one for every face (a
// chart written through Helm 3 and through Helm 4 is stored once); chart.go
// describes Helm 3's chart.Chart to it and builds one from what it decodes,
// keeping exactly what Helm's JSON round trip of a chart keeps (Helm 4's mod
// times, which Helm 3 has not, are dropped, as Helm 3's JSON drops them).
// What Assemble returns deep-equals what Helm's own drivers return for the
// same release. A decoded chart part (ChartPart) is immutable and shared
// through the part cache; the releases of one call share its values and file
// bytes (Shared), as Helm's Memory driver returns shared objects.
package helm3codec
