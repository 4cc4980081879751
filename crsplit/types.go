package crsplit

import (
	"encoding/json"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/helmstore/helmstore/cas"
	"github.com/helmstore/helmstore/driver"
)

// Group and Version of the helmstore custom resources.
const (
	Group   = "helmstore.io"
	Version = "v1"
)

const apiVersion = Group + "/" + Version

// Resource names (plurals) of the custom resources.
const (
	resReleases  = "releases"
	resCharts    = "charts"
	resValues    = "values"
	resManifests = "manifests"
	resChunks    = "chunks"
)

// allResources are the resources of every kind the backend writes.
var allResources = []string{resReleases, resCharts, resValues, resManifests, resChunks}

// releaseObject is a Release: one stored revision (the engine's head).
type releaseObject struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata"`
	Spec              releaseSpec `json:"spec"`
}

type releaseSpec struct {
	cas.HeadFields
	// Chart is the chart's name and version, for the printer columns.
	Chart string `json:"chart,omitempty"`
	// The summary; Updated and Description (the record's
	// info.last_deployed and info.description) show in the printer
	// columns.
	driver.SummaryFields
	Parts partRefs `json:"parts"`
	// Embedded are the frames of the parts the Release holds itself
	// instead of Values or Manifest objects (small deltas of this
	// revision: cas.HeadRecord.Embedded).
	Embedded []cas.EmbeddedFrame `json:"embedded,omitempty"`
	// Record is the head body (the release without chart, values and
	// manifest) as the engine stores it: its compressed frame, base64 in
	// JSON. It is one opaque string rather than a structured object, so
	// that the API server does not decode, prune, validate and track the
	// fields of a deep object on every write and read of the Release.
	Record []byte `json:"record,omitempty"`
	// Release is the head body's JSON as a structured object, as Releases
	// written by earlier versions hold it (read, never written).
	Release json.RawMessage `json:"release,omitempty"`
	// ReleaseChunks is set instead of Record when the frame is too large
	// for one object: it is in Chunk objects.
	ReleaseChunks *cas.ChunkSet `json:"releaseChunks,omitempty"`
}

type partRefs struct {
	Chart    string `json:"chart,omitempty"`
	Values   string `json:"values,omitempty"`
	Manifest string `json:"manifest,omitempty"`
	// ValuesBase and ManifestBase name the base (keyframe) part of values
	// or a manifest stored as a delta: a Values or Manifest object the
	// Release references, and owns, as its other parts.
	ValuesBase   string `json:"valuesBase,omitempty"`
	ManifestBase string `json:"manifestBase,omitempty"`
}

// partObject is a Chart, Values or Manifest: one content-addressed part,
// named by its digest and owned by every Release that references it.
type partObject struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata"`
	Spec              cas.PartRecord `json:"spec"`
}

// chunkObject is a Chunk: one piece of a frame too large for one object,
// owned by the part or release the frame belongs to.
type chunkObject struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata"`
	Spec              chunkSpec `json:"spec"`
}

type chunkSpec struct {
	Of    string `json:"of,omitempty"`
	Index int    `json:"index"`
	Data  []byte `json:"data"`
}

// objectList is any list response; items are decoded lazily.
type objectList struct {
	metav1.ListMeta `json:"metadata"`
	Items           []json.RawMessage `json:"items"`
}
