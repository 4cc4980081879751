package driver

import (
	"fmt"
	"strings"
)

// DigestText is a head's five part digests as a backend stores them, as
// text: 64 lowercase hex digits each, "" for none. Its field names match
// the Head fields they hold, so a backend's own struct with the same five
// string fields converts to and from it.
type DigestText struct {
	Chart, Values, Manifest, ValuesBase, ManifestBase string
}

// DigestText returns h's part digests as text, for storing.
func (h *Head) DigestText() DigestText {
	return DigestText{Chart: h.Chart.String(), Values: h.Values.String(), Manifest: h.Manifest.String(),
		ValuesBase: h.ValuesBase.String(), ManifestBase: h.ManifestBase.String()}
}

// SetDigestText parses stored digests into h. Each digest that does not
// parse is left zero, and the error, which wraps ErrCorrupt, names
// every one of them and the release: a backend reading such a head returns
// it with Err set to that error (Head.Err), so that the release is reported
// as corrupt and can still be deleted.
func (h *Head) SetDigestText(t DigestText) error {
	var problems []string
	for _, f := range []struct {
		name string
		text string
		d    *Digest
	}{{"chart", t.Chart, &h.Chart}, {"values", t.Values, &h.Values}, {"manifest", t.Manifest, &h.Manifest},
		{"values base", t.ValuesBase, &h.ValuesBase}, {"manifest base", t.ManifestBase, &h.ManifestBase}} {
		d, err := ParseDigest(f.text)
		if err != nil {
			problems = append(problems, fmt.Sprintf("%s digest: %v", f.name, err))
		}
		*f.d = d
	}
	if len(problems) > 0 {
		return fmt.Errorf("release %q in namespace %q: %w: %s", h.Key, h.Namespace, ErrCorrupt, strings.Join(problems, "; "))
	}
	return nil
}
