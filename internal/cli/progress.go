package cli

import (
	"fmt"
	"io"
	"os"
	"sync"

	"github.com/schollz/progressbar/v3"
	"golang.org/x/term"

	"github.com/helmstore/helmstore/migrate"
)

// progress shows a long command's work: a progress bar when standard
// output is a terminal (releases and revisions done, bytes, rate, time
// left), one plain line per release otherwise, nothing for -o json.
type progress struct {
	out   io.Writer
	quiet bool

	mu                  sync.Mutex
	bar                 *progressbar.ProgressBar
	releases, revisions int
	releasesDone        int
	bytes               int64
	// counts holds, per release in hand and action, its revisions done.
	counts map[string]map[migrate.Action]int
}

// isTerminal reports whether w is a terminal.
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

func newProgress(e *env, quiet bool) *progress {
	return &progress{out: e.out, quiet: quiet, counts: map[string]map[migrate.Action]int{}}
}

// selected starts the bar, once the numbers are known.
func (p *progress) selected(releases, revisions int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.releases, p.revisions = releases, revisions
	if p.quiet || !isTerminal(p.out) {
		return
	}
	p.bar = progressbar.NewOptions(revisions,
		progressbar.OptionSetWriter(p.out),
		progressbar.OptionSetDescription(p.describe()),
		progressbar.OptionShowCount(),
		progressbar.OptionShowIts(),
		progressbar.OptionSetItsString("rev"),
		progressbar.OptionSetPredictTime(true),
		progressbar.OptionFullWidth(),
		progressbar.OptionSetRenderBlankState(true),
		progressbar.OptionOnCompletion(func() { fmt.Fprintln(p.out) }),
	)
}

// describe is the bar's text: releases done and bytes moved.
func (p *progress) describe() string {
	return fmt.Sprintf("%d/%d releases, %s", p.releasesDone, p.releases, bytesText(p.bytes))
}

// event records one revision done.
func (p *progress) event(ev migrate.Event) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.bytes += ev.Bytes
	rel := ev.Revision.Namespace + "/" + ev.Revision.Name
	if p.counts[rel] == nil {
		p.counts[rel] = map[migrate.Action]int{}
	}
	p.counts[rel][ev.Action]++
	if ev.Last {
		p.releasesDone++
	}
	switch {
	case p.quiet:
	case p.bar != nil:
		p.bar.Describe(p.describe())
		p.bar.Add(1)
	case ev.Action == migrate.Check || ev.Action == migrate.Copy && ev.Bytes == 0:
		// A plan: one line per revision.
		fmt.Fprintf(p.out, "%-7s %s\n", ev.Action, ev.Revision)
	case ev.Last:
		fmt.Fprintf(p.out, "%s: %s\n", rel, countsText(p.counts[rel]))
	}
	if ev.Last {
		delete(p.counts, rel)
	}
}

// countsText says what was done with the revisions of one release.
func countsText(counts map[migrate.Action]int) string {
	s := ""
	for _, a := range []migrate.Action{migrate.Copy, migrate.Present, migrate.Replace, migrate.Remove} {
		if n := counts[a]; n > 0 {
			if s != "" {
				s += ", "
			}
			s += fmt.Sprintf("%d %s", n, actionText[a])
		}
	}
	return s
}

var actionText = map[migrate.Action]string{
	migrate.Copy: "copied", migrate.Present: "present", migrate.Replace: "replaced", migrate.Remove: "removed",
}

// done ends the bar.
func (p *progress) done() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.bar != nil {
		p.bar.Finish()
		p.bar = nil
	}
}

// bytesText prints n bytes in KiB, MiB or GiB.
func bytesText(n int64) string {
	switch {
	case n >= 1<<30:
		return fmt.Sprintf("%.1f GiB", float64(n)/(1<<30))
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d B", n)
}
