package sql

import (
	"context"
	"crypto/rand"
	stdsql "database/sql"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"
	"helm.sh/helm/v3/pkg/chart"
	"helm.sh/helm/v3/pkg/release"

	"github.com/helmstore/helmstore/driver"
	"github.com/helmstore/helmstore/driver/backend"
	"github.com/helmstore/helmstore/internal/testenv"
)

func openMySQLStore(t *testing.T, dsn string) (driver.Store, *sqlBackend) {
	t.Helper()
	s, err := driver.Open(context.Background(), "mysql", dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s, backend.BackendOf(s).(*sqlBackend)
}

func smallRelease(name string, v int) *release.Release {
	return &release.Release{Name: name, Namespace: "default", Version: v,
		Chart:  &chart.Chart{Metadata: &chart.Metadata{Name: "c", Version: "1.0.0"}, Templates: []*chart.File{{Name: "t.yaml", Data: []byte("kind: ConfigMap\n")}}},
		Config: map[string]interface{}{"v": float64(v)}, Manifest: "kind: ConfigMap\n",
		Info: &release.Info{Status: release.StatusDeployed}}
}

func key(name string, v int) string { return backend.MakeKey(name, v) }

// A part larger than max_allowed_packet (random bytes do not compress) is
// split into chunks under it, on a server with default settings.
func TestMySQLChunksUnderMaxAllowedPacket(t *testing.T) {
	dsn := testenv.MySQL(t)
	s, b := openMySQLStore(t, dsn)
	var maxPacket int
	if err := b.db.QueryRow("SELECT @@max_allowed_packet").Scan(&maxPacket); err != nil {
		t.Fatal(err)
	}
	blob := make([]byte, maxPacket+maxPacket/2)
	rand.Read(blob)
	r := smallRelease("blob", 1)
	r.Chart.Files = []*chart.File{{Name: "data.bin", Data: blob}}
	if err := s.Create(key("blob", 1), r); err != nil {
		t.Fatal(err)
	}
	var chunks, largest int
	if err := b.db.QueryRow("SELECT COUNT(*), MAX(LENGTH(data)) FROM helmstore_part_chunks").Scan(&chunks, &largest); err != nil {
		t.Fatal(err)
	}
	if chunks < 3 || largest >= maxPacket {
		t.Fatalf("%d chunks, largest %d bytes; want several, each under max_allowed_packet %d", chunks, largest, maxPacket)
	}
	got, err := s.Get(key("blob", 1))
	if err != nil {
		t.Fatal(err)
	}
	if string(got.Chart.Files[0].Data) != string(blob) {
		t.Fatal("the chunked part came back different")
	}
	if _, err := s.Delete(key("blob", 1)); err != nil {
		t.Fatal(err)
	}
	if err := b.db.QueryRow("SELECT COUNT(*) FROM helmstore_part_chunks").Scan(&chunks); err != nil || chunks != 0 {
		t.Fatalf("after delete %d chunks remain (%v)", chunks, err)
	}
}

// A connection killed mid-transaction fails that operation, leaves no part
// of the release behind, and the next operation succeeds on a new connection.
func TestMySQLKilledConnection(t *testing.T) {
	dsn := testenv.MySQL(t)
	s, b := openMySQLStore(t, dsn)
	admin, err := stdsql.Open("mysql", dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close()
	killed := false
	b.beforeCommit = func(ctx context.Context, tx *stdsql.Tx, attempt int) error {
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
	}
	err = s.Create(key("app", 1), smallRelease("app", 1))
	if err == nil {
		t.Fatal("create on a killed connection succeeded")
	}
	if errors.Is(err, driver.ErrReleaseNotFound) || errors.Is(err, driver.ErrReleaseExists) {
		t.Fatalf("a killed connection was reported as %v", err)
	}
	if !strings.Contains(err.Error(), key("app", 1)) {
		t.Fatalf("error does not name the release: %v", err)
	}
	if _, err := s.Get(key("app", 1)); !errors.Is(err, driver.ErrReleaseNotFound) {
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
	if err := s.Create(key("app", 1), smallRelease("app", 1)); err != nil {
		t.Fatalf("the next create: %v", err)
	}
	if _, err := s.Get(key("app", 1)); err != nil {
		t.Fatal(err)
	}
}

// A real deadlock: our transaction is chosen as the victim (the other holds
// more rows) and is run again, and the release is stored once.
func TestMySQLDeadlockIsRetried(t *testing.T) {
	dsn := testenv.MySQL(t)
	s, b := openMySQLStore(t, dsn)
	if err := s.Create(key("other", 1), smallRelease("other", 1)); err != nil {
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
	b.beforeCommit = func(ctx context.Context, tx *stdsql.Tx, attempt int) error {
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
		if err := lockRow(otx, key("other", 1)); err != nil {
			return err
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			err := lockRow(otx, key("app", 1))
			otx.Rollback()
			otherErr <- err
		}()
		time.Sleep(300 * time.Millisecond) // let it queue behind our lock
		return lockRow(tx, key("other", 1))
	}
	if err := s.Create(key("app", 1), smallRelease("app", 1)); err != nil {
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

// A lock wait timeout (1205) is retried: another session holds the same key
// uncommitted for longer than the timeout, then rolls back.
func TestMySQLLockWaitTimeoutIsRetried(t *testing.T) {
	dsn := testenv.MySQL(t)
	sep := "?"
	if strings.Contains(dsn, "?") {
		sep = "&"
	}
	s, _ := openMySQLStore(t, dsn+sep+"innodb_lock_wait_timeout=1")
	other, err := stdsql.Open("mysql", dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	s.Namespace("default").Stats(context.Background()) // migrated
	otx, err := other.Begin()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := otx.Exec("INSERT INTO helmstore_releases (namespace, release_key, name, version, status, owner, created_at, labels, chart_digest, values_digest, manifest_digest, body) VALUES ('default', ?, 'app', 1, 'x', 'helm', 0, '{}', '', '', '', '')", key("app", 1)); err != nil {
		t.Fatal(err)
	}
	go func() {
		time.Sleep(1500 * time.Millisecond)
		otx.Rollback()
	}()
	if err := s.Create(key("app", 1), smallRelease("app", 1)); err != nil {
		t.Fatalf("create after a lock wait timeout: %v", err)
	}
	if r, err := s.Get(key("app", 1)); err != nil || r.Info.Status != release.StatusDeployed {
		t.Fatalf("get: %v", err)
	}
}

func TestMySQLConfig(t *testing.T) {
	cfg, err := mysqlConfig("u:p@tcp(db:3306)/helm?multiStatements=true&interpolateParams=true&charset=latin1")
	if err != nil {
		t.Fatal(err)
	}
	if cfg.MultiStatements || cfg.InterpolateParams || !cfg.ParseTime || cfg.Collation != "utf8mb4_general_ci" || cfg.Params["charset"] != "" || cfg.Timeout == 0 {
		t.Fatalf("correctness settings not enforced: %+v", cfg)
	}
	cfg, err = mysqlConfig("mysql://u:p%40ss@db:3307/helm?tls=skip-verify")
	if err != nil || cfg.Addr != "db:3307" || cfg.Passwd != "p@ss" || cfg.DBName != "helm" || cfg.TLSConfig != "skip-verify" {
		t.Fatalf("URL form: %+v, %v", cfg, err)
	}
	if _, err := mysqlConfig("u:p@tcp(db)/helm?tls-ca=/nonexistent.pem"); err == nil || !strings.Contains(err.Error(), "tls-ca") {
		t.Fatalf("missing CA file: %v", err)
	}
	if _, err := mysqlConfig("u:p@tcp(db)/"); err == nil {
		t.Fatal("a DSN without a database was accepted")
	}
}
