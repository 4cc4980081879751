package driver

import "testing"

func TestDigestShort(t *testing.T) {
	t.Parallel()
	if got := (Digest{}).Short(); got != "" {
		t.Errorf("zero digest Short() = %q, want \"\"", got)
	}
	d := Sum([]byte("x"))
	if got, want := d.Short(), d.String()[:12]; got != want {
		t.Errorf("Short() = %q, want %q", got, want)
	}
}
