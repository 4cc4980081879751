package testenv

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"database/sql"
	"encoding/pem"
	"errors"
	"fmt"
	"math/big"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"
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
		Unavailable(t, "mariadbd and mariadb-install-db (for the TLS test)", fmt.Errorf("not installed: %v %v", err, serr))
	}
	dir := t.TempDir()
	ca, err := writeCerts(dir)
	if err != nil {
		t.Fatal(err)
	}
	data := filepath.Join(dir, "data")
	if out, err := exec.Command(install, "--no-defaults", "--user=root", "--datadir="+data, "--auth-root-authentication-method=normal", "--skip-test-db").CombinedOutput(); err != nil {
		t.Fatalf("mariadb-install-db: %v\n%s", err, out)
	}
	port := FreePort(t)
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
	if !waitFor(addr, 60*time.Second) {
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

// writeCerts writes a CA and a server certificate for 127.0.0.1 into dir and
// returns the CA file.
func writeCerts(dir string) (string, error) {
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return "", err
	}
	caTmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "helmstore test CA"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		return "", err
	}
	srvKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return "", err
	}
	srvTmpl := &x509.Certificate{SerialNumber: big.NewInt(2), Subject: pkix.Name{CommonName: "127.0.0.1"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
		IPAddresses: []net.IP{net.ParseIP("127.0.0.1")}, DNSNames: []string{"localhost"},
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}
	caCert, _ := x509.ParseCertificate(caDER)
	srvDER, err := x509.CreateCertificate(rand.Reader, srvTmpl, caCert, &srvKey.PublicKey, caKey)
	if err != nil {
		return "", err
	}
	keyDER, err := x509.MarshalPKCS8PrivateKey(srvKey)
	if err != nil {
		return "", err
	}
	files := map[string]*pem.Block{
		"ca.pem":         {Type: "CERTIFICATE", Bytes: caDER},
		"server.pem":     {Type: "CERTIFICATE", Bytes: srvDER},
		"server-key.pem": {Type: "PRIVATE KEY", Bytes: keyDER},
	}
	for name, b := range files {
		if err := os.WriteFile(filepath.Join(dir, name), pem.EncodeToMemory(b), 0o600); err != nil {
			return "", err
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "ca.pem")); err != nil {
		return "", errors.New("certificates not written")
	}
	return filepath.Join(dir, "ca.pem"), nil
}

// OtherCA writes a CA unrelated to any server into dir and returns its file.
func OtherCA(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	ca, err := writeCerts(dir)
	if err != nil {
		t.Fatal(err)
	}
	return ca
}
