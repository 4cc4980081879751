package mysql

import (
	"context"
	"crypto/rand"
	stdsql "database/sql"
	"strings"
	"testing"
	"time"

	"helm.sh/helm/v3/pkg/chart"
	"helm.sh/helm/v3/pkg/release"

	"github.com/helmstore/helmstore/helm3"
	"github.com/helmstore/helmstore/internal/testing/sqltest"
	"github.com/helmstore/helmstore/internal/testing/testenv/sqlenv"
)

// openStore opens a mysql store and returns it with its backend.
func openStore(t *testing.T, dsn string) (helm3.Store, sqltest.Backend) {
	t.Helper()
	s := sqltest.Open(t, "mysql", dsn)
	t.Cleanup(func() { s.Close() })
	return s, sqltest.BackendOf(t, s)
}

// A part larger than max_allowed_packet (random bytes do not compress) is
// split into chunks under it, on a server with default settings.
func TestMySQLChunksUnderMaxAllowedPacket(t *testing.T) {
	dsn := sqlenv.MySQL(t)
	s, b := openStore(t, dsn)
	var maxPacket int
	if err := b.DB().QueryRow("SELECT @@max_allowed_packet").Scan(&maxPacket); err != nil {
		t.Fatal(err)
	}
	blob := make([]byte, maxPacket+maxPacket/2)
	rand.Read(blob)
	r := sqltest.Release("blob", "default", 1)
	r.Chart.Files = []*chart.File{{Name: "data.bin", Data: blob}}
	if err := s.Create(sqltest.Key("blob", 1), r); err != nil {
		t.Fatal(err)
	}
	var chunks, largest int
	if err := b.DB().QueryRow("SELECT COUNT(*), MAX(LENGTH(data)) FROM helmstore_part_chunks").Scan(&chunks, &largest); err != nil {
		t.Fatal(err)
	}
	if chunks < 3 || largest >= maxPacket {
		t.Fatalf("%d chunks, largest %d bytes; want several, each under max_allowed_packet %d", chunks, largest, maxPacket)
	}
	got, err := s.Get(sqltest.Key("blob", 1))
	if err != nil {
		t.Fatal(err)
	}
	if string(got.Chart.Files[0].Data) != string(blob) {
		t.Fatal("the chunked part came back different")
	}
	if _, err := s.Delete(sqltest.Key("blob", 1)); err != nil {
		t.Fatal(err)
	}
	if err := b.DB().QueryRow("SELECT COUNT(*) FROM helmstore_part_chunks").Scan(&chunks); err != nil || chunks != 0 {
		t.Fatalf("after delete %d chunks remain (%v)", chunks, err)
	}
}

// A lock wait timeout (1205) is retried: another session holds the same key
// uncommitted for longer than the timeout, then rolls back.
func TestMySQLLockWaitTimeoutIsRetried(t *testing.T) {
	dsn := sqlenv.MySQL(t)
	sep := "?"
	if strings.Contains(dsn, "?") {
		sep = "&"
	}
	s, _ := openStore(t, dsn+sep+"innodb_lock_wait_timeout=1")
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
	if _, err := otx.Exec("INSERT INTO helmstore_releases (namespace, release_key, name, version, status, owner, created_at, labels, chart_digest, values_digest, manifest_digest) VALUES ('default', ?, 'app', 1, 'x', 'helm', 0, '{}', '', '', '')", sqltest.Key("app", 1)); err != nil {
		t.Fatal(err)
	}
	go func() {
		time.Sleep(1500 * time.Millisecond)
		otx.Rollback()
	}()
	if err := s.Create(sqltest.Key("app", 1), sqltest.Release("app", "default", 1)); err != nil {
		t.Fatalf("create after a lock wait timeout: %v", err)
	}
	if r, err := s.Get(sqltest.Key("app", 1)); err != nil || r.Info.Status != release.StatusDeployed {
		t.Fatalf("get: %v", err)
	}
}
