package driver

import "fmt"

// Kind names what a part holds. Its value is also the first byte of the
// part's canonical bytes, so parts of different kinds never share a digest.
type Kind byte

// The kinds of part a release is split into.
const (
	KindChart    Kind = 'c' // the release's chart (rls.Chart)
	KindValues   Kind = 'v' // the user-supplied values (rls.Config)
	KindManifest Kind = 'm' // the rendered manifest (rls.Manifest)
)

// kinds lists every kind, in the order a head references them.
var kinds = []Kind{KindChart, KindValues, KindManifest}

// String returns "chart", "values" or "manifest".
func (k Kind) String() string {
	switch k {
	case KindChart:
		return "chart"
	case KindValues:
		return "values"
	case KindManifest:
		return "manifest"
	}
	return fmt.Sprintf("kind(%d)", byte(k))
}

// Kinds returns every kind, in the order a head references them.
func Kinds() []Kind { return append([]Kind(nil), kinds...) }
