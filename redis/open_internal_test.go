package redis

import (
	"testing"

	goredis "github.com/redis/go-redis/v9"
)

// Every client dials once per command attempt unless the connection
// string says otherwise (go-redis would dial five times, each up to
// dial_timeout, before an attempt fails: a minute on a host that does not
// answer, and a Cluster's slot map reload paying it for a dead node).
func TestDialerRetries(t *testing.T) {
	for conn, want := range map[string]int{
		"redis://127.0.0.1:1/0":                                            1,
		"redis://127.0.0.1:1,127.0.0.1:2":                                  1,
		"redis://127.0.0.1:1,127.0.0.1:2?dialer_retries=3":                 3,
		"redis://127.0.0.1:1/0?cluster=true":                               1,
		"redis://127.0.0.1:1,127.0.0.1:2/0?master_name=m":                  1,
		"redis://127.0.0.1:1,127.0.0.1:2/0?master_name=m&dialer_retries=2": 2,
	} {
		c, _, err := newClient(conn, nil, &logSink{log: t.Logf})
		if err != nil {
			t.Fatalf("%s: %v", conn, err)
		}
		var got int
		switch c := c.(type) {
		case *goredis.ClusterClient:
			got = c.Options().DialerRetries
		case *goredis.Client:
			got = c.Options().DialerRetries
		}
		c.Close()
		if got != want {
			t.Errorf("%s: DialerRetries %d, want %d", conn, got, want)
		}
	}
}
