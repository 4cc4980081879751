package cosmos

import (
	"errors"
	"net/http"
	"sync/atomic"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"

	"github.com/helmstore/helmstore/cas"
	"github.com/helmstore/helmstore/helm3"
	"github.com/helmstore/helmstore/internal/testing/castest"
)

// errAnswerLost is what a request whose answer loseAnswers dropped fails
// with.
var errAnswerLost = errors.New("the answer was lost (test)")

// loseAnswers is a per-call policy that sends every request, and drops
// the answers of the item writes numbered from, from+1, ..., to (counted
// from 1): the service applied them, the client gets an error.
type loseAnswers struct {
	from, to int64
	writes   atomic.Int64
	lost     atomic.Int64
}

func (l *loseAnswers) Do(req *policy.Request) (*http.Response, error) {
	write := isItemWrite(req.Raw())
	resp, err := req.Next()
	if write {
		if n := l.writes.Add(1); n >= l.from && n <= l.to {
			if err == nil {
				resp.Body.Close()
			}
			l.lost.Add(1)
			return nil, errAnswerLost
		}
	}
	return resp, err
}

// TestLostAnswersThenRetry runs castest.LostAnswersThenRetry on the test
// server, losing the answers of runs of the writer's item writes (numbered
// from 1). Before pending windows, the rollback gave up and left a pending
// head that made every Create of the key fail with "exists" for ten
// minutes, while Get said not found.
func TestLostAnswersThenRetry(t *testing.T) {
	conn := connString(t)
	runs := [][2]int{{1, 1}, {1, 3}, {2, 2}, {2, 4}, {2, 8}, {3, 6}}
	castest.LostAnswersThenRetry(t, runs, func() helm3.Store {
		s, _ := openTest(t, conn, options{}, helm3.WithTimeout(20*time.Second))
		return s.Namespace(castest.Namespace)
	}, func(from, to int) (helm3.Store, func() int) {
		lose := &loseAnswers{from: int64(from), to: int64(to)}
		s, _ := openTest(t, conn, options{perCall: []policy.Policy{lose}}, helm3.WithTimeout(20*time.Second), quiet)
		return s.Namespace(castest.Namespace), func() int { return int(lose.lost.Load()) }
	})
}

// TestDeadWriterPendingWindow runs castest.DeadWriterPendingWindow on the
// test server, the writer's client dying after its first item write.
// Before pending windows the key was refused for ten minutes.
func TestDeadWriterPendingWindow(t *testing.T) {
	const timeout, skew = time.Minute, 30 * time.Second
	conn := connString(t)
	castest.DeadWriterPendingWindow(t, timeout, skew, func() (helm3.Store, func(error) bool) {
		cfg := cas.Config{ClockSkew: skew}
		ks := &killSwitch{limit: 1} // the head's create, then nothing
		s, _ := openTest(t, conn, options{protocol: &cfg, perCall: []policy.Policy{ks}}, helm3.WithTimeout(timeout), quiet)
		return s.Namespace(castest.Namespace), func(err error) bool { return errors.Is(err, errDied) }
	}, func(clock cas.Clock) helm3.Store {
		cfg := cas.Config{ClockSkew: skew, Clock: clock}
		s, _ := openTest(t, conn, options{protocol: &cfg}, helm3.WithTimeout(timeout))
		return s.Namespace(castest.Namespace)
	})
}
