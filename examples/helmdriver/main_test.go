package main

import (
	"path/filepath"
	"strings"
	"testing"
)

func TestRunWithSQLite(t *testing.T) {
	t.Setenv("HELM_DRIVER_SQLITE_CONNECTION_STRING", filepath.Join(t.TempDir(), "helm.db"))
	var out strings.Builder
	if err := run(&out, "sqlite"); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "0 releases in the sqlite store (driver sqlite)") {
		t.Fatalf("output: %s", out.String())
	}
	if err := run(&out, "nosuchdriver"); err == nil || !strings.Contains(err.Error(), "valid names are") {
		t.Fatalf("unknown driver: %v", err)
	}
}
