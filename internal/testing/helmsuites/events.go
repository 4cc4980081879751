package helmsuites

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
)

// event is one line of go tool test2json's output.
type event struct {
	Action string
	Test   string
	Output string
}

// parseEvents reads test2json events from rd into r, and returns the
// output that belongs to no test.
func (r *run) parseEvents(rd io.Reader) ([]string, error) {
	var loose []string
	dec := json.NewDecoder(rd)
	for {
		var e event
		if err := dec.Decode(&e); err == io.EOF {
			return loose, nil
		} else if err != nil {
			return nil, fmt.Errorf("reading go tool test2json's output: %w", err)
		}
		if e.Test == "" {
			if e.Action == "output" {
				loose = append(loose, strings.TrimRight(e.Output, "\n"))
			}
			continue
		}
		tr := r.tests[e.Test]
		if tr == nil {
			tr = &testResult{}
			r.tests[e.Test] = tr
			r.order = append(r.order, e.Test)
		}
		switch e.Action {
		case "output":
			tr.output = append(tr.output, strings.TrimRight(e.Output, "\n"))
		case "pass", "fail", "skip":
			tr.action = e.Action
		}
	}
}

// stderrNote is the standard error of a run, if it printed one, to add to
// an error.
func stderrNote(s string) string {
	if s = strings.TrimSpace(s); s == "" {
		return ""
	}
	return ": " + s
}
