package crsplit

import (
	"context"
	"encoding/json"
	"unicode/utf8"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/helmstore/helmstore/cas"
	"github.com/helmstore/helmstore/driver"
)

// annotationSummary holds, on every Release, what a listing returns of it
// (releaseSummary, JSON): a copy of fields of its spec, written with them
// in the same write, so that a summary listing reads the Releases'
// metadata alone (a list of PartialObjectMetadata, in protobuf), not their
// records, which are most of their bytes.
const annotationSummary = "helmstore.io/summary"

// maxDescription bounds the description a Release's spec and summary
// annotation hold (for the printer columns and the summary listing): a
// longer one (a failure's whole output) is cut there, with the summary
// marked as not recorded (driver.SummaryFields.HasSummary false), so that a
// listing reads that release whole and returns its description as stored
// in its record. The record has no such bound.
const maxDescription = 8 << 10

// fitSummary returns h, or, if its description is over maxDescription, a
// copy with it cut and the summary marked as not recorded.
func fitSummary(h *cas.HeadRecord) *cas.HeadRecord {
	if len(h.Description) <= maxDescription {
		return h
	}
	c := *h
	cut := maxDescription
	for cut > 0 && !utf8.RuneStart(c.Description[cut]) {
		cut--
	}
	c.Description = c.Description[:cut] + "…"
	c.HasSummary = false
	return &c
}

// maxSummaryAnnotation bounds annotationSummary: a Release whose summary is
// longer (a description of many kilobytes) has none, and a listing reads it
// whole. Kubernetes refuses an object whose annotations exceed 256 KiB.
const maxSummaryAnnotation = 16 << 10

// summaryFallback is the most Releases without a summary that reads (written
// by an earlier version, or damaged) a summary listing reads one by one;
// with more, it lists the Releases whole.
const summaryFallback = 64

// releaseSummary is the value of annotationSummary.
type releaseSummary struct {
	cas.HeadFields
	driver.SummaryFields
}

// summaryAnnotations returns the annotations of a Release holding h: its
// summary, unless longer than maxSummaryAnnotation.
func summaryAnnotations(h *cas.HeadRecord) (map[string]string, error) {
	b, err := json.Marshal(releaseSummary{HeadFields: h.HeadFields, SummaryFields: h.SummaryFields})
	if err != nil {
		return nil, err
	}
	m := map[string]string{}
	if len(b) <= maxSummaryAnnotation {
		m[annotationSummary] = string(b)
	}
	return m, nil
}

// listSummaries lists the Releases opts selects in ns by their metadata
// alone, each with the summary its annotation holds (cas.Object.SummaryOnly).
// A Release whose annotation is missing or does not decode is returned
// with no record, for the protocol to read whole; with more than
// summaryFallback of them, ok is false and the caller lists the Releases
// whole instead.
func (s *kubeStore) listSummaries(ctx context.Context, ns string, opts metav1.ListOptions) (objs []*cas.Object, ok bool, err error) {
	ms, err := s.c.listMeta(ctx, resReleases, ns, opts)
	if err != nil {
		return nil, false, err
	}
	objs = make([]*cas.Object, len(ms))
	without := 0
	for i := range ms {
		m := &ms[i].ObjectMeta
		obj := fromMeta(cas.KindHead, m)
		obj.SummaryOnly = true
		var rs releaseSummary
		if v, ok := m.Annotations[annotationSummary]; ok && json.Unmarshal([]byte(v), &rs) == nil {
			obj.Head = &cas.HeadRecord{HeadFields: rs.HeadFields, SummaryFields: rs.SummaryFields}
		} else if without++; without > summaryFallback {
			return nil, false, nil
		}
		objs[i] = obj
	}
	return objs, true, nil
}
