package cli

import (
	"context"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/spf13/cobra"
	rspb "helm.sh/helm/v4/pkg/release/v1"
)

// statusFlags are the status command's flags, helm status's but
// --show-resources.
type statusFlags struct {
	revision int
	showDesc bool
	output   outputFormat
}

func newStatusCmd(e *env) *cobra.Command {
	f := &statusFlags{}
	cmd := &cobra.Command{
		Use:   "status RELEASE_NAME",
		Short: "Print a release's status as helm status does",
		Long: `status prints the status of a release (its latest revision, or --revision) as helm status
prints it without --show-resources: when it was last deployed, its namespace, status and
revision, its test suite and the chart's notes. -o json and -o yaml print the release without
its chart, in the form the Helm of --helm prints it (Helm 4's status always shows the
description).`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runStatus(cmd.Context(), e, f, args[0])
		},
	}
	fs := cmd.Flags()
	fs.IntVar(&f.revision, "revision", 0, "if set, display the status of the named release with revision")
	fs.BoolVar(&f.showDesc, "show-desc", false, "if set, display the description message of the named release")
	addOutputFlag(cmd, &f.output)
	return cmd
}

func runStatus(ctx context.Context, e *env, f *statusFlags, name string) error {
	s, err := e.openHelmstore(ctx)
	if err != nil {
		return err
	}
	defer s.Close()
	rel, err := readRelease(ctx, s.Namespace(e.namespace(false)), name, f.revision)
	if err != nil {
		return err
	}
	p := &releasePrinter{rel: rel, helm: e.helm, showDesc: f.showDesc}
	if e.helm == 4 {
		// Helm 4's JSON form, without the chart.
		r := *rel
		r.Chart = nil
		p.native = &r
	}
	return f.output.write(e.out, p)
}

// releasePrinter prints a release as helm status does (Helm 3's, unless
// helm is 4), and with debug and showMetadata (get all) as helm get all
// does: with its chart, values, hooks and manifest.
type releasePrinter struct {
	rel *rspb.Release
	// native is what -o json and yaml print, when set: the release as the
	// Helm that made it returned it (install, upgrade); else the release
	// without its chart in Helm 3's form (status).
	native any
	// helm is 4 for Helm 4's status block: DESCRIPTION always, colours on
	// a terminal.
	helm                                     int
	showDesc, showMetadata, debug, hideNotes bool
}

func (p *releasePrinter) value() any {
	if p.native != nil {
		return p.native
	}
	return helm3Release(p.rel)
}

func (p *releasePrinter) table(w io.Writer) error {
	r := p.rel
	if r == nil {
		return nil
	}
	var b strings.Builder
	fmt.Fprintf(&b, "NAME: %s\n", r.Name)
	if !r.Info.LastDeployed.IsZero() {
		fmt.Fprintf(&b, "LAST DEPLOYED: %s\n", r.Info.LastDeployed.Format(time.ANSIC))
	}
	if p.helm == 4 {
		fmt.Fprintf(&b, "NAMESPACE: %s\nSTATUS: %s\nREVISION: %d\n", colorNamespace(r.Namespace), colorStatus(r.Info.Status), r.Version)
	} else {
		fmt.Fprintf(&b, "NAMESPACE: %s\nSTATUS: %s\nREVISION: %d\n", r.Namespace, r.Info.Status, r.Version)
	}
	if p.showMetadata && r.Chart != nil && r.Chart.Metadata != nil {
		m := r.Chart.Metadata
		fmt.Fprintf(&b, "CHART: %s\nVERSION: %s\nAPP_VERSION: %s\n", m.Name, m.Version, m.AppVersion)
	}
	if p.showDesc || p.helm == 4 {
		fmt.Fprintf(&b, "DESCRIPTION: %s\n", r.Info.Description)
	}
	writeTests(&b, r)
	if p.debug {
		b.WriteString("USER-SUPPLIED VALUES:\n")
		if err := writeYAML(&b, r.Config); err != nil {
			return err
		}
		vals, err := computedValues(p.helm, r.Chart, r.Config)
		if err != nil {
			return err
		}
		b.WriteString("\nCOMPUTED VALUES:\n")
		if err := writeYAML(&b, vals); err != nil {
			return err
		}
		b.WriteString("\n")
	}
	if p.debug || strings.EqualFold(r.Info.Description, "Dry run complete") {
		b.WriteString("HOOKS:\n")
		writeHooks(&b, r.Hooks)
		fmt.Fprintf(&b, "MANIFEST:\n%s\n", r.Manifest)
	}
	if !p.hideNotes && r.Info.Notes != "" {
		fmt.Fprintf(&b, "NOTES:\n%s\n", strings.TrimSpace(r.Info.Notes))
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// writeTests writes the TEST SUITE lines: the test hooks that have run, or
// None if the release has no test hook.
func writeTests(b *strings.Builder, r *rspb.Release) {
	var tests []*rspb.Hook
	for _, h := range r.Hooks {
		for _, ev := range h.Events {
			if ev == rspb.HookTest {
				tests = append(tests, h)
			}
		}
	}
	if len(tests) == 0 {
		b.WriteString("TEST SUITE: None\n")
		return
	}
	for _, h := range tests {
		if h.LastRun.StartedAt.IsZero() {
			continue
		}
		fmt.Fprintf(b, "TEST SUITE:     %s\nLast Started:   %s\nLast Completed: %s\nPhase:          %s\n",
			h.Name, h.LastRun.StartedAt.Format(time.ANSIC), h.LastRun.CompletedAt.Format(time.ANSIC), h.LastRun.Phase)
	}
}

// writeHooks writes hooks as YAML documents, each after a comment naming
// its template, as helm get hooks does.
func writeHooks(w io.Writer, hooks []*rspb.Hook) {
	for _, h := range hooks {
		fmt.Fprintf(w, "---\n# Source: %s\n%s\n", h.Path, h.Manifest)
	}
}
