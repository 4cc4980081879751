package cli

import (
	"encoding/json"
	"fmt"
	"io"
	"time"

	"github.com/gosuri/uitable"
	"github.com/spf13/cobra"
	"sigs.k8s.io/yaml"
)

// outputFormat is the -o flag of the inspection commands: table, json or
// yaml, as helm's -o.
type outputFormat string

const (
	outputTable outputFormat = "table"
	outputJSON  outputFormat = "json"
	outputYAML  outputFormat = "yaml"
)

func (o *outputFormat) String() string { return string(*o) }
func (o *outputFormat) Type() string   { return "format" }

// Set accepts table, json and yaml.
func (o *outputFormat) Set(s string) error {
	switch f := outputFormat(s); f {
	case outputTable, outputJSON, outputYAML:
		*o = f
		return nil
	}
	return fmt.Errorf("invalid format type %q: table, json or yaml", s)
}

// addOutputFlag adds -o/--output to cmd, table by default.
func addOutputFlag(cmd *cobra.Command, o *outputFormat) {
	*o = outputTable
	cmd.Flags().VarP(o, "output", "o", "prints the output in the specified format. Allowed values: table, json, yaml")
}

// printer is what the inspection commands print, in each of the formats.
type printer interface {
	table(w io.Writer) error
	// value is what json and yaml encode.
	value() any
}

// write writes p to w in format o.
func (o outputFormat) write(w io.Writer, p printer) error {
	switch o {
	case outputJSON:
		return writeJSON(w, p.value())
	case outputYAML:
		return writeYAML(w, p.value())
	}
	return p.table(w)
}

// writeJSON writes v as one line of JSON, as helm -o json does.
func writeJSON(w io.Writer, v any) error {
	return json.NewEncoder(w).Encode(v)
}

// writeYAML writes v as YAML (through its JSON form, keys sorted), as helm
// -o yaml does.
func writeYAML(w io.Writer, v any) error {
	b, err := yaml.Marshal(v)
	if err != nil {
		return err
	}
	_, err = w.Write(b)
	return err
}

// newTable returns a table laid out as helm's tables are: columns separated
// by a tab and padded to the widest cell, no width limit.
func newTable(header ...any) *uitable.Table {
	t := uitable.New()
	if len(header) > 0 {
		t.AddRow(header...)
	}
	return t
}

// writeTable writes t and a newline.
func writeTable(w io.Writer, t *uitable.Table) error {
	_, err := w.Write(append(t.Bytes(), '\n'))
	return err
}

// helm3Time is a time that encodes to JSON as Helm 3's release times do:
// "" when zero, else RFC 3339 with nanoseconds.
type helm3Time struct{ time.Time }

// MarshalJSON encodes the zero time as "".
func (t helm3Time) MarshalJSON() ([]byte, error) {
	if t.IsZero() {
		return []byte(`""`), nil
	}
	return t.Time.MarshalJSON()
}
