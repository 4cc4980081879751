package redis_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"helm.sh/helm/v3/pkg/release"

	"github.com/helmstore/helmstore/driver"
	"github.com/helmstore/helmstore/drivertest"
	"github.com/helmstore/helmstore/helm3"
	"github.com/helmstore/helmstore/internal/testing/testenv"
	"github.com/helmstore/helmstore/internal/testing/testenv/redisenv"
	"github.com/helmstore/helmstore/redis"
)

// startSentinel starts a primary, a replica and three Sentinels, the
// servers and the Sentinels each with a password of their own, and returns
// them with both passwords.
func startSentinel(t *testing.T) (s *redisenv.Sentinel, secrets []string) {
	secrets = []string{testenv.UniqueName("primary-secret-"), testenv.UniqueName("sentinel-secret-")}
	return redisenv.StartSentinel(t, 1, 3, secrets[0], secrets[1]), secrets
}

// The whole suite over a Sentinel connection string (password-protected
// Sentinels and servers); then Open with a wrong password or master name
// fails, naming no password (a wrong password as driver.ErrAccessDenied).
func TestConformanceSentinel(t *testing.T) {
	s, secrets := startSentinel(t)
	drivertest.Run(t, harness(func(testing.TB) string { return s.URL() }))
	t.Run("WrongCredentials", func(t *testing.T) {
		good := s.URL()
		for what, conn := range map[string]string{
			"Sentinel password": strings.Replace(good, secrets[1], "wrong-sentinel-secret", 1),
			"server password":   strings.Replace(good, secrets[0], "wrong-server-secret", 1),
			"master name":       strings.Replace(good, "master_name="+redisenv.SentinelMaster, "master_name=nosuchmaster", 1),
		} {
			if conn == good {
				t.Fatalf("%s: the connection string %q does not hold what the test replaces", what, conn)
			}
			st, err := helm3.Open(context.Background(), redis.Name, conn+"&dial_timeout=2s", helm3.WithTimeout(20*time.Second))
			if err == nil {
				st.Close()
				t.Errorf("Open with a wrong %s succeeded", what)
				continue
			}
			if errors.Is(err, helm3.ErrReleaseNotFound) {
				t.Errorf("Open with a wrong %s: %v", what, err)
			}
			if strings.HasSuffix(what, "password") != errors.Is(err, helm3.ErrAccessDenied) {
				t.Errorf("Open with a wrong %s: %v; want helm3.ErrAccessDenied for a wrong password (only)", what, err)
			}
			for _, secret := range append(secrets, "wrong-sentinel-secret", "wrong-server-secret") {
				if strings.Contains(err.Error(), secret) {
					t.Errorf("Open with a wrong %s: the error shows a password: %v", what, err)
				}
			}
			t.Logf("wrong %s: %v", what, err)
		}
	})
}

// upgradeFound upgrades name as Helm does, from what the store holds: it
// reads the history, creates the revision after the last one deployed, and
// supersedes every other deployed revision. It returns the revision
// created; an error says which step failed. A release not found is
// installed, unless it must exist.
func upgradeFound(s helm3.Store, ns, name string, mustExist bool) (int, error) {
	rs, err := s.Query(map[string]string{"name": name, "owner": "helm"})
	if errors.Is(err, helm3.ErrReleaseNotFound) && !mustExist {
		rs, err = nil, nil
	}
	if err != nil {
		return 0, fmt.Errorf("history: %w", err)
	}
	last := 0
	for _, r := range rs {
		last = max(last, r.Version)
	}
	v := last + 1
	if err := s.Create(driver.MakeKey(name, v), smallRelease(name, ns, v, release.StatusDeployed)); err != nil {
		return 0, fmt.Errorf("create revision %d: %w", v, err)
	}
	for _, r := range rs {
		if r.Info.Status == release.StatusDeployed {
			if err := s.Update(driver.MakeKey(name, r.Version), smallRelease(name, ns, r.Version, release.StatusSuperseded)); err != nil {
				return v, fmt.Errorf("supersede revision %d: %w", r.Version, err)
			}
		}
	}
	return v, nil
}

// failoverErrors collects the errors the store returned while the primary
// was down, and the ones it may not return.
type failoverErrors struct {
	mu          sync.Mutex
	unavailable int
	exists      int
	bad         []error
	all         []string
}

// add records err (nil: nothing). Unavailability is what an outage may
// cause; "exists" too, for a Create whose reply was lost and that go-redis
// sent again; anything else ("not found" above all) is wrong.
func (f *failoverErrors) add(err error) {
	if err == nil {
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.all = append(f.all, err.Error())
	switch {
	case errors.Is(err, helm3.ErrReleaseNotFound):
		f.bad = append(f.bad, err)
	case errors.Is(err, helm3.ErrUnavailable):
		f.unavailable++
	case errors.Is(err, helm3.ErrReleaseExists) && strings.Contains(err.Error(), ": create revision "):
		f.exists++
	default:
		f.bad = append(f.bad, err)
	}
}

// The primary killed while four goroutines upgrade releases and another
// reads them: the Sentinels promote the replica and the same store follows
// it without being reopened. The primary's writes are paused and
// replicated just before the kill, so that what it acknowledged is on the
// replica (Redis replicates asynchronously; without this the last
// acknowledged writes may be lost by any Redis client, and this test
// checks the store, not Redis): every acknowledged revision is there
// afterwards, whole, each release's revisions numbered without a gap, and
// exactly one of them deployed. Errors while the primary is down are
// unavailability, never "not found"; neither password appears in an error
// or the log.
func TestSentinelFailover(t *testing.T) {
	sen, secrets := startSentinel(t)
	var l logs
	ns := "failover"
	s := openStore(t, withPrefix(t, sen.URL()), helm3.WithLog(l.log)).Namespace(ns)
	defer s.Close()
	const writers = 4
	acked := make([][]int, writers)
	for w := range acked {
		for i := 0; i < 3; i++ {
			v, err := upgradeFound(s, ns, fmt.Sprintf("app-%d", w), i > 0)
			if err != nil {
				t.Fatal(err)
			}
			acked[w] = append(acked[w], v)
		}
	}
	if err := sen.WaitReplicated(30 * time.Second); err != nil {
		t.Fatal(err)
	}
	old, err := sen.Primary()
	if err != nil {
		t.Fatal(err)
	}

	var errs failoverErrors
	var mu sync.Mutex
	failedOver := false
	afterFailover := make([]int, writers) // upgrades acknowledged once the new primary was known
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for w := 0; w < writers; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			name := fmt.Sprintf("app-%d", w)
			lastOK := false
			giveUp := time.Time{}
			for {
				select {
				case <-stop:
					// End on a whole upgrade: the last one supersedes
					// what an interrupted one left deployed.
					if lastOK {
						return
					}
					if giveUp.IsZero() {
						giveUp = time.Now().Add(time.Minute)
					} else if time.Now().After(giveUp) {
						errs.add(fmt.Errorf("%s: no upgrade succeeds a minute after the failover", name))
						return
					}
				default:
				}
				v, err := upgradeFound(s, ns, name, true)
				lastOK = err == nil
				mu.Lock()
				if v > 0 {
					acked[w] = append(acked[w], v) // its Create was acknowledged
				}
				if err == nil && failedOver {
					afterFailover[w]++
				}
				mu.Unlock()
				if err != nil {
					errs.add(fmt.Errorf("%s: %w", name, err))
					time.Sleep(50 * time.Millisecond)
				}
			}
		}(w)
	}
	wg.Add(1)
	go func() { // a reader of what was replicated before the kill
		defer wg.Done()
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			name := fmt.Sprintf("app-%d", i%writers)
			if _, err := s.Get(driver.MakeKey(name, 1+i%3)); err != nil {
				errs.add(fmt.Errorf("get: %w", err))
				time.Sleep(20 * time.Millisecond)
			}
			if _, err := s.Query(map[string]string{"name": name, "owner": "helm"}); err != nil {
				errs.add(fmt.Errorf("history: %w", err))
			}
		}
	}()

	// Let the upgrades run, then stop the primary's writes, let the
	// replica catch up and kill the primary.
	time.Sleep(500 * time.Millisecond)
	oc := old.Client()
	if err := oc.Do(context.Background(), "CLIENT", "PAUSE", "10000", "WRITE").Err(); err != nil {
		t.Fatal(err)
	}
	oc.Close()
	if err := sen.WaitReplicated(30 * time.Second); err != nil {
		t.Fatal(err)
	}
	old.Kill()
	promoted, err := sen.WaitFailover(old, 60*time.Second)
	if err != nil {
		close(stop)
		wg.Wait()
		t.Fatal(err)
	}
	mu.Lock()
	failedOver = true
	mu.Unlock()
	// Run until every writer has upgraded on the new primary.
	deadline := time.Now().Add(60 * time.Second)
	for {
		mu.Lock()
		done := true
		for _, n := range afterFailover {
			done = done && n > 0
		}
		mu.Unlock()
		if done {
			break
		}
		if time.Now().After(deadline) {
			t.Errorf("some writer did not upgrade within a minute of the failover: %v", afterFailover)
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	close(stop)
	wg.Wait()

	for _, err := range errs.bad {
		t.Errorf("during the failover: %v", err)
	}
	for _, e := range append(errs.all, l.String()) {
		for _, secret := range secrets {
			if strings.Contains(e, secret) {
				t.Errorf("a password shows in %q", e)
			}
		}
	}
	total := 0
	for w := 0; w < writers; w++ {
		name := fmt.Sprintf("app-%d", w)
		n := history(t, s, ns, name) // whole, 1..n, the last deployed, the others superseded
		for _, v := range acked[w] {
			if v > n {
				t.Errorf("%s: revision %d was acknowledged but is lost (%d revisions)", name, v, n)
			}
		}
		total += len(acked[w])
	}
	if errs.unavailable == 0 {
		t.Error("no operation failed while the primary was down: was it killed?")
	}
	t.Logf("failover from %s to %s: %d upgrades acknowledged; %d operations unavailable and %d creates answered exists meanwhile",
		old.Addr, promoted.Addr, total, errs.unavailable, errs.exists)
}
