package engine

import (
	"math/rand/v2"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/util/validation"
)

// The engine's name and label rules accept exactly what apimachinery's
// validation accepts (which the engine does not link): on hand-picked
// edges and on 200,000 random strings over the bytes that matter, near and
// past every length limit.
func TestNamesAsKubernetes(t *testing.T) {
	rules := []struct {
		name string
		ours func(string) string
		k8s  func(string) []string
	}{
		{"DNS-1123 label", dns1123Label, validation.IsDNS1123Label},
		{"DNS-1123 subdomain", dns1123Subdomain, validation.IsDNS1123Subdomain},
		{"label value", labelValue, validation.IsValidLabelValue},
		{"qualified name", qualifiedName, validation.IsQualifiedName},
	}
	edges := []string{"", "a", "A", "-", "a-", "-a", "a.b", "a..b", ".a", "a.", "a_b", "a/b", "/b", "a/", "a//b", "a/b/c",
		"example.com/x", "Example.com/x", "x.io/-y", "x.io/y-", "a b", "ä", "a\x00", strings.Repeat("a", 63), strings.Repeat("a", 64),
		strings.Repeat("a", 253), strings.Repeat("a", 254), strings.Repeat("a.", 126) + "a", strings.Repeat("a", 253) + "/b",
		"x/" + strings.Repeat("b", 63), "x/" + strings.Repeat("b", 64), "1", "0-0", "a_", "_a", "a.b_c-d"}
	r := rand.New(rand.NewPCG(1, 2))
	const alphabet = "abz09AZ-_./ é"
	for range 200000 {
		n := r.IntN(8)
		switch r.IntN(4) {
		case 0:
			n = 60 + r.IntN(8)
		case 1:
			n = 250 + r.IntN(8)
		}
		b := make([]byte, n)
		for i := range b {
			b[i] = alphabet[r.IntN(len(alphabet))]
		}
		edges = append(edges, string(b))
	}
	for _, rule := range rules {
		for _, s := range edges {
			if ours, theirs := rule.ours(s) == "", len(rule.k8s(s)) == 0; ours != theirs {
				t.Errorf("%s %q: ours valid %v, apimachinery's %v (%v)", rule.name, s, ours, theirs, rule.k8s(s))
			}
		}
	}
}
