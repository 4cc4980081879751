package main

import (
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

func TestQuickstart(t *testing.T) {
	var out strings.Builder
	if err := run(&out, filepath.Join(t.TempDir(), "helm.db")); err != nil {
		t.Fatal(err)
	}
	s := out.String()
	for _, want := range []string{
		"6         deployed    web-1.4.0", "Rollback to 3",
		"(1 chart, 5 values, 5 manifest parts)",
		"the store now holds 0 releases and 0 parts",
	} {
		if !strings.Contains(s, want) {
			t.Fatalf("output lacks %q:\n%s", want, s)
		}
	}
	m := regexp.MustCompile(`\(([0-9.]+)x more\)`).FindStringSubmatch(s)
	if m == nil {
		t.Fatalf("no size comparison in output:\n%s", s)
	}
	if x, _ := strconv.ParseFloat(m[1], 64); x < 3 {
		t.Fatalf("helmstore stored only %.1fx less than the Secrets driver:\n%s", x, s)
	}
}
