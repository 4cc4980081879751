package helmsuites

import (
	"regexp"
	"strings"
)

// maxReason bounds a reason's length in the report.
const maxReason = 300

// goLine is a t.Error line: "    file_test.go:123: message".
var goLine = regexp.MustCompile(`^\s*[\w.-]+\.go:\d+: ?(.*)$`)

// testifyLabel is a label line of a testify failure ("\tError Trace:\t...").
var testifyLabel = regexp.MustCompile(`^\s*([A-Z][A-Za-z ]*):\s`)

// reasonOf returns why a test failed, from its output: testify's Error
// (with its continuation lines), else the first t.Error message, else a
// panic, else its first line of output that is not go test's own, in one
// line (oneLine). It returns "" when the test printed
// nothing of its own (a parent that failed because a subtest did).
func reasonOf(output []string) string {
	var lines []string
	for _, l := range output {
		s := strings.TrimSpace(l)
		if s == "" || strings.HasPrefix(s, "=== ") || strings.HasPrefix(s, "--- ") {
			continue
		}
		lines = append(lines, l)
	}
	if r := testifyError(lines); r != "" {
		return oneLine(r)
	}
	for _, l := range lines {
		if m := goLine.FindStringSubmatch(l); m != nil && strings.TrimSpace(m[1]) != "" {
			return oneLine(m[1])
		}
	}
	for _, l := range lines {
		if s := strings.TrimSpace(l); strings.HasPrefix(s, "panic:") {
			return oneLine(s)
		}
	}
	if len(lines) > 0 {
		return oneLine(lines[0])
	}
	return ""
}

// testifyError returns the text of a testify failure's "Error:" field and
// the lines that continue it, or "".
func testifyError(lines []string) string {
	for i, l := range lines {
		m := testifyLabel.FindStringSubmatch(l)
		if m == nil || m[1] != "Error" {
			continue
		}
		parts := []string{strings.TrimSpace(l[len(m[0]):])}
		for _, c := range lines[i+1:] {
			if testifyLabel.MatchString(c) || goLine.MatchString(c) {
				break
			}
			parts = append(parts, strings.TrimSpace(c))
		}
		return strings.Join(parts, " ")
	}
	return ""
}

// address is a pointer printed by %v or testify, which differs from run
// to run.
var address = regexp.MustCompile(`\b0x[0-9a-f]{6,}\b`)

// oneLine collapses s's white space and writes pointers as 0x….
func oneLine(s string) string {
	return address.ReplaceAllString(strings.Join(strings.Fields(s), " "), "0x…")
}

// clip bounds s, a reason, to maxReason bytes for the report.
func clip(s string) string {
	if len(s) > maxReason {
		return strings.ToValidUTF8(s[:maxReason], "") + "…"
	}
	return s
}
