package sqlbackend_test

import (
	"context"
	stdsql "database/sql"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"

	"github.com/helmstore/helmstore/helm3"
	"github.com/helmstore/helmstore/internal/testing/sqltest"
	"github.com/helmstore/helmstore/internal/testing/testenv/sqlenv"
)

// A connection killed mid-transaction fails that operation, leaves no part
// of the release behind, and the next operation succeeds on a new connection.
func TestMySQLKilledConnection(t *testing.T) {
	dsn := sqlenv.MySQL(t)
	s, b := openStore(t, "mysql", dsn)
	admin, err := stdsql.Open("mysql", dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close()
	killed := false
	b.SetBeforeCommit(func(ctx context.Context, tx *stdsql.Tx, attempt int) error {
		if killed {
			return nil
		}
		killed = true
		var id int64
		if err := tx.QueryRowContext(ctx, "SELECT CONNECTION_ID()").Scan(&id); err != nil {
			return err
		}
		_, err := admin.Exec(fmt.Sprintf("KILL CONNECTION %d", id))
		return err
	})
	err = s.Create(sqltest.Key("app", 1), sqltest.Release("app", "default", 1))
	if err == nil {
		t.Fatal("create on a killed connection succeeded")
	}
	if errors.Is(err, helm3.ErrReleaseNotFound) || errors.Is(err, helm3.ErrReleaseExists) {
		t.Fatalf("a killed connection was reported as %v", err)
	}
	if !strings.Contains(err.Error(), sqltest.Key("app", 1)) {
		t.Fatalf("error does not name the release: %v", err)
	}
	if _, err := s.Get(sqltest.Key("app", 1)); !errors.Is(err, helm3.ErrReleaseNotFound) {
		t.Fatalf("after the failed create: %v", err)
	}
	st, err := s.Stats(context.Background())
	if err != nil || st.Releases != 0 || st.TotalParts() != 0 {
		t.Fatalf("the failed create left %+v (%v)", st, err)
	}
	var labels int
	admin.QueryRow("SELECT COUNT(*) FROM helmstore_part_chunks").Scan(&labels)
	if labels != 0 {
		t.Fatalf("the failed create left %d chunks", labels)
	}
	if err := s.Create(sqltest.Key("app", 1), sqltest.Release("app", "default", 1)); err != nil {
		t.Fatalf("the next create: %v", err)
	}
	if _, err := s.Get(sqltest.Key("app", 1)); err != nil {
		t.Fatal(err)
	}
}

// A real deadlock: our transaction is chosen as the victim (the other holds
// more rows) and is run again, the release is stored once, and the
// deadlock is counted and logged.
func TestMySQLDeadlockIsRetried(t *testing.T) {
	dsn := sqlenv.MySQL(t)
	var logMu sync.Mutex
	var logged []string
	s, b := openStore(t, "mysql", dsn, helm3.WithLog(func(format string, v ...interface{}) {
		logMu.Lock()
		logged = append(logged, fmt.Sprintf(format, v...))
		logMu.Unlock()
	}))
	if err := s.Create(sqltest.Key("other", 1), sqltest.Release("other", "default", 1)); err != nil {
		t.Fatal(err)
	}
	other, err := stdsql.Open("mysql", dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	var attempts []int
	var wg sync.WaitGroup
	otherErr := make(chan error, 1)
	b.SetBeforeCommit(func(ctx context.Context, tx *stdsql.Tx, attempt int) error {
		attempts = append(attempts, attempt)
		if attempt > 0 {
			return nil
		}
		// The other transaction writes many rows (so InnoDB picks us as
		// the victim), locks the row "other", then waits for our head row.
		otx, err := other.BeginTx(ctx, nil)
		if err != nil {
			return err
		}
		var vals []string
		for i := 0; i < 500; i++ {
			vals = append(vals, fmt.Sprintf("('zz','k%d','l','v')", i))
		}
		if _, err := otx.Exec("INSERT INTO helmstore_labels VALUES " + strings.Join(vals, ",")); err != nil {
			return err
		}
		if err := lockRow(otx, sqltest.Key("other", 1)); err != nil {
			return err
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			err := lockRow(otx, sqltest.Key("app", 1))
			otx.Rollback()
			otherErr <- err
		}()
		time.Sleep(300 * time.Millisecond) // let it queue behind our lock
		return lockRow(tx, sqltest.Key("other", 1))
	})
	if err := s.Create(sqltest.Key("app", 1), sqltest.Release("app", "default", 1)); err != nil {
		t.Fatalf("create: %v (attempts %v)", err, attempts)
	}
	wg.Wait()
	if len(attempts) < 2 {
		t.Fatalf("the transaction ran %d times; a deadlock victim must be run again", len(attempts))
	}
	var me *mysql.MySQLError
	if err := <-otherErr; err != nil && !(errors.As(err, &me) && me.Number == 1213) {
		t.Fatalf("the other transaction: %v", err)
	}
	rs, err := s.Query(map[string]string{"name": "app"})
	if err != nil || len(rs) != 1 {
		t.Fatalf("after the retried create: %d releases, %v", len(rs), err)
	}
	if n := b.Deadlocks(); n != 1 {
		t.Errorf("%d deadlocks counted; want 1", n)
	}
	logMu.Lock()
	defer logMu.Unlock()
	n := 0
	for _, l := range logged {
		if strings.Contains(l, "mysql reported a deadlock to a write transaction (attempt 1)") {
			n++
		}
	}
	if n != 1 {
		t.Errorf("the deadlock was logged %d times; want once. The log:\n%s", n, strings.Join(logged, "\n"))
	}
}

// lockRow locks a head row for update in tx.
func lockRow(tx *stdsql.Tx, k string) error {
	var got string
	err := tx.QueryRow("SELECT release_key FROM helmstore_releases WHERE namespace='default' AND release_key=? FOR UPDATE", k).Scan(&got)
	if errors.Is(err, stdsql.ErrNoRows) {
		return nil
	}
	return err
}
