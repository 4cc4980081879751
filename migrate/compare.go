package migrate

import (
	"bytes"
	"encoding/json"
	"maps"

	rspb "helm.sh/helm/v4/pkg/release/v1"
)

// Equal reports whether two stores hand back the same revision: the same
// JSON, as Helm's drivers store a release, and the same custom labels
// (which Helm keeps beside the JSON). This is what a move checks of every
// revision it writes, and of every revision it finds already present.
func Equal(a, b *rspb.Release) (bool, error) {
	if a == nil || b == nil {
		return a == b, nil
	}
	ja, err := json.Marshal(a)
	if err != nil {
		return false, err
	}
	return equalTo(ja, a.Labels, b)
}

// equalTo reports whether b is the release whose JSON is ja and whose
// custom labels are labels: Equal, with one side encoded once.
func equalTo(ja []byte, labels map[string]string, b *rspb.Release) (bool, error) {
	if b == nil {
		return false, nil
	}
	jb, err := json.Marshal(b)
	if err != nil {
		return false, err
	}
	return bytes.Equal(ja, jb) && labelsEqual(labels, b.Labels), nil
}

// labelsEqual compares custom labels, a nil map being an empty one.
func labelsEqual(a, b map[string]string) bool {
	return len(a) == len(b) && (len(a) == 0 || maps.Equal(a, b))
}
