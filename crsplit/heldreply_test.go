package crsplit

import (
	"errors"
	"strconv"
	"testing"
	"time"

	"github.com/helmstore/helmstore/cas"
	"github.com/helmstore/helmstore/helm3"
	"github.com/helmstore/helmstore/internal/testing/testenv"
	"github.com/helmstore/helmstore/internal/testing/testenv/kubeenv"
)

// A Create whose reply the API server sent but the network held until the
// Create's deadline passed (a path that stops answering, not a reset):
// the store still tells its own create apart from none, so it answers nil
// or ErrUnavailable, and a retried Create is then nil (nothing was stored)
// or ErrReleaseExists with the release readable (the first had applied):
// "exists" for a release nobody can read lasts no longer than
// cas.DefaultClockSkew after the writer's window (a rollback that the
// deadline cut short).
func TestCreateReplyHeldPastDeadline(t *testing.T) {
	k := cluster(t)
	s, b := openAs(t, k, kubeenv.Admin, helm3.DefaultNamespace)
	loss := &testenv.ReplyLoss{Hold: true}
	rc := proxiedConfig(k.Config(kubeenv.Admin), func(addr string) string { return testenv.NewLossyProxy(t, addr, loss).Addr })
	rc.TLSClientConfig.NextProtos = []string{"http/1.1"} // a request per message
	ps, err := openStore(ctxT(t), rc, helm3.WithLog(t.Logf), helm3.WithTimeout(4*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	defer ps.Close()
	held := 0
	for n := 1; n <= 12; n++ {
		name := "held"
		key := "sh.helm.release.v1." + name + ".v" + strconv.Itoa(n)
		loss.Arm(n)
		err := ps.Namespace(helm3.DefaultNamespace).Create(key, smallRelease(name, helm3.DefaultNamespace, n, "c"))
		fired := loss.Disarm()
		if !fired {
			if err != nil {
				t.Fatalf("Create with nothing held: %v", err)
			}
			if held == 0 {
				t.Fatal("no reply of the Create was held")
			}
			return
		}
		held++
		if err != nil && (!errors.Is(err, helm3.ErrUnavailable) || errors.Is(err, helm3.ErrReleaseExists) || errors.Is(err, helm3.ErrReleaseNotFound)) {
			t.Fatalf("Create whose reply to message %d was held: %v; want nil or helm3.ErrUnavailable", n, err)
		}
		b.WaitCommits()
		// A head whose writer could not undo it in time (its rollback
		// runs on after the deadline) holds the key until ClockSkew
		// after the writer's window at most; then a retry is answered.
		var again, gerr error
		for until := time.Now().Add(cas.DefaultClockSkew + 5*time.Second); ; {
			again = s.Create(key, smallRelease(name, helm3.DefaultNamespace, n, "c"))
			_, gerr = s.Get(key)
			if again == nil || errors.Is(again, helm3.ErrReleaseExists) && gerr == nil || time.Now().After(until) {
				break
			}
			time.Sleep(500 * time.Millisecond)
		}
		if again != nil && !(errors.Is(again, helm3.ErrReleaseExists) && gerr == nil) {
			t.Fatalf("message %d held (Create said %v): %v after the writer's window, the retried Create says %v, Get says %v; want nil, or exists with the release readable", n, err, cas.DefaultClockSkew+5*time.Second, again, gerr)
		}
		t.Logf("message %d held: Create %v; retried Create %v", n, err, again)
	}
	t.Fatal("the Create still had replies held after 12 messages")
}
