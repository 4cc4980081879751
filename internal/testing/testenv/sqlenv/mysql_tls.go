package sqlenv

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/helmstore/helmstore/internal/testing/testenv"
)

// TLSMySQL is a private MariaDB server that accepts only TLS connections,
// with a certificate signed by its own CA.
type TLSMySQL struct {
	Addr     string // 127.0.0.1:port
	CAFile   string // PEM of the CA that signed the server's certificate
	User     string // a user that must connect over TLS
	Password string
	Database string
}

// StartTLSMySQL starts a private mariadbd with require_secure_transport on a
// free port, stopped when t ends.
func StartTLSMySQL(t *testing.T) *TLSMySQL {
	t.Helper()
	server, err := exec.LookPath("mariadbd")
	if err != nil {
		server = "/usr/sbin/mariadbd"
	}
	install, err := exec.LookPath("mariadb-install-db")
	if _, serr := os.Stat(server); err != nil || serr != nil {
		testenv.Unavailable(t, "mariadbd and mariadb-install-db (for the TLS test)", fmt.Errorf("not installed: %v %v", err, serr))
	}
	dir := t.TempDir()
	ca, err := testenv.WriteCerts(dir)
	if err != nil {
		t.Fatal(err)
	}
	data := filepath.Join(dir, "data")
	if out, err := exec.Command(install, "--no-defaults", "--user=root", "--datadir="+data, "--auth-root-authentication-method=normal", "--skip-test-db").CombinedOutput(); err != nil {
		t.Fatalf("mariadb-install-db: %v\n%s", err, out)
	}
	port := testenv.FreePort(t)
	sock := filepath.Join(dir, "mysqld.sock")
	cmd := exec.Command(server, "--no-defaults", "--user=root", "--datadir="+data, fmt.Sprintf("--port=%d", port),
		"--bind-address=127.0.0.1", "--socket="+sock, "--pid-file="+filepath.Join(dir, "pid"), "--skip-log-bin",
		"--innodb-buffer-pool-size=32M", "--require-secure-transport=ON",
		"--ssl-ca="+ca, "--ssl-cert="+filepath.Join(dir, "server.pem"), "--ssl-key="+filepath.Join(dir, "server-key.pem"))
	cmd.Stdout, cmd.Stderr = nil, nil
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	addr := fmt.Sprintf("127.0.0.1:%d", port)
	if !testenv.WaitReachable(addr, 60*time.Second) {
		t.Fatal("private mariadbd did not start")
	}
	// Over the socket (which counts as secure), make a TLS-only user.
	db, err := sql.Open("mysql", "root@unix("+sock+")/")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for _, q := range []string{
		"CREATE DATABASE helm CHARACTER SET utf8mb4",
		"CREATE USER 'helm'@'%' IDENTIFIED BY 'tls-only-pw' REQUIRE SSL",
		"GRANT ALL ON helm.* TO 'helm'@'%'",
	} {
		if _, err := db.ExecContext(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	return &TLSMySQL{Addr: addr, CAFile: ca, User: "helm", Password: "tls-only-pw", Database: "helm"}
}
