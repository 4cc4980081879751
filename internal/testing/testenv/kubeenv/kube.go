// Package kubeenv starts a real Kubernetes API server for the crsplit
// tests: etcd and kube-apiserver (built from tools/etcd and tools/kube by
// kubebuild) on loopback ports, with token users and RBAC, shared by a test
// binary (Kube) or started apart (Start), and kube-controller-manager on
// demand.
package kubeenv

import (
	"crypto/rand"
	"crypto/rsa"
	"crypto/tls"
	"crypto/x509"
	"encoding/hex"
	"encoding/pem"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"github.com/helmstore/helmstore/internal/testing/testenv"
)

// EtcdDataEnv names a directory for etcd's data instead of the server's
// temporary directory (for example a tmpfs: /dev/shm).
const EtcdDataEnv = "HELMSTORE_ETCD_DATA_DIR"

// Admin is the user in group system:masters on every Server.
const Admin = "admin"

// Users are users every Server authenticates by token and
// authorizes for nothing: tests bind them to roles.
var Users = []string{"alice", "bob", "carol", "dave"}

// Server is a real etcd and kube-apiserver on loopback ports, with token
// authentication and RBAC authorization.
type Server struct {
	// URL is the API server's address, https://127.0.0.1:PORT.
	URL string
	// CAData verifies the API server's self-signed certificate.
	CAData []byte
	// Kubeconfig is a kubeconfig file with a context per user, named after
	// it (Admin and each of Users); the current context is Admin.
	Kubeconfig string

	dir       string
	extraDirs []string
	bin       string // the directory of kube-apiserver and kube-controller-manager
	etcdBin   string
	tokens    map[string]string

	etcd, apiserver *testenv.Proc
}

// Start starts etcd and kube-apiserver (built by Binaries) in a
// temporary directory. Stop ends them and removes the directory.
func Start() (*Server, error) {
	bins, err := Binaries()
	if err != nil {
		return nil, err
	}
	removeStaleKubeDirs()
	dir, err := os.MkdirTemp("", "helmstore-kube-")
	if err != nil {
		return nil, err
	}
	// Whose directory this is, for removeStaleKubeDirs.
	if err := os.WriteFile(filepath.Join(dir, "owner.pid"), []byte(strconv.Itoa(os.Getpid())), 0o644); err != nil {
		return nil, err
	}
	k := &Server{dir: dir, bin: bins.Dir, etcdBin: bins.Etcd, tokens: map[string]string{}}
	if err := k.writeCredentials(); err != nil {
		k.Stop()
		return nil, err
	}
	for attempt := 0; ; attempt++ {
		err = k.start()
		if err == nil {
			break
		}
		k.stopProcs()
		// A port taken between choosing and binding it: choose again.
		if attempt == 2 || !strings.Contains(err.Error(), "address already in use") {
			k.Stop()
			return nil, err
		}
	}
	if err := k.writeKubeconfig(); err != nil {
		k.Stop()
		return nil, err
	}
	return k, nil
}

// removeStaleKubeDirs removes the directories of servers whose test process
// died without stopping them (a panic, a kill): their processes died with
// it (see testenv.StartProc), their data did not.
func removeStaleKubeDirs() {
	dirs, _ := filepath.Glob(filepath.Join(os.TempDir(), "helmstore-kube-*"))
	for _, d := range dirs {
		b, err := os.ReadFile(filepath.Join(d, "owner.pid"))
		if err != nil {
			continue
		}
		pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
		if err != nil || testenv.ProcessAlive(pid) {
			continue
		}
		os.RemoveAll(d)
		if data := os.Getenv(EtcdDataEnv); data != "" {
			os.RemoveAll(filepath.Join(data, filepath.Base(d)+"-etcd"))
		}
	}
}

func randomToken() string {
	b := make([]byte, 16)
	rand.Read(b)
	return hex.EncodeToString(b)
}

// writeCredentials writes the service-account signing key pair and the
// token file.
func (k *Server) writeCredentials() error {
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		return err
	}
	pub, err := x509.MarshalPKIXPublicKey(&key.PublicKey)
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(k.dir, "sa.key"), pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(key)}), 0o600); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(k.dir, "sa.pub"), pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: pub}), 0o644); err != nil {
		return err
	}
	var b strings.Builder
	k.tokens[Admin] = randomToken()
	fmt.Fprintf(&b, "%s,%s,%s,system:masters\n", k.tokens[Admin], Admin, Admin)
	for _, u := range Users {
		k.tokens[u] = randomToken()
		fmt.Fprintf(&b, "%s,%s,%s\n", k.tokens[u], u, u)
	}
	return os.WriteFile(filepath.Join(k.dir, "tokens.csv"), []byte(b.String()), 0o600)
}

func (k *Server) start() error {
	ports, err := testenv.FreePorts(3)
	if err != nil {
		return err
	}
	client := fmt.Sprintf("http://127.0.0.1:%d", ports[0])
	peer := fmt.Sprintf("http://127.0.0.1:%d", ports[1])
	data := filepath.Join(k.dir, "etcd")
	if d := os.Getenv(EtcdDataEnv); d != "" {
		// A tmpfs such as /dev/shm makes etcd's fsyncs free: faster
		// tests, and benchmarks that leave out disk latency.
		data = filepath.Join(d, filepath.Base(k.dir)+"-etcd")
		k.extraDirs = append(k.extraDirs, data)
	}
	os.RemoveAll(data)
	k.etcd, err = testenv.StartProc(k.dir, "etcd", k.etcdBin,
		"--name", "default", "--data-dir", data,
		"--listen-client-urls", client, "--advertise-client-urls", client,
		"--listen-peer-urls", peer, "--initial-advertise-peer-urls", peer,
		"--initial-cluster", "default="+peer,
		// Room for the large runs (200 releases x 10 revisions of a 2.2 MB
		// release in Secrets, moved out and back): the default is 2 GB.
		"--quota-backend-bytes", "8589934592")
	if err != nil {
		return err
	}
	if err := testenv.WaitUntil(k.etcd, 30*time.Second, func() bool { return httpOK(http.DefaultClient, client+"/health", "") }); err != nil {
		return err
	}
	k.URL = fmt.Sprintf("https://127.0.0.1:%d", ports[2])
	k.apiserver, err = testenv.StartProc(k.dir, "kube-apiserver", filepath.Join(k.bin, kubeAPIServer),
		"--etcd-servers="+client,
		fmt.Sprintf("--secure-port=%d", ports[2]), "--bind-address=127.0.0.1",
		"--cert-dir="+filepath.Join(k.dir, "certs"),
		"--service-account-issuer=https://kubernetes.default.svc",
		"--service-account-key-file="+filepath.Join(k.dir, "sa.pub"),
		"--service-account-signing-key-file="+filepath.Join(k.dir, "sa.key"),
		"--token-auth-file="+filepath.Join(k.dir, "tokens.csv"),
		"--authorization-mode=RBAC",
		"--service-cluster-ip-range=10.0.0.0/24",
		"--disable-admission-plugins=ServiceAccount",
		"--profiling=false")
	if err != nil {
		return err
	}
	// The certificate appears once the server has generated it.
	certFile := filepath.Join(k.dir, "certs", "apiserver.crt")
	if err := testenv.WaitUntil(k.apiserver, 60*time.Second, func() bool {
		b, err := os.ReadFile(certFile)
		if err != nil || len(b) == 0 {
			return false
		}
		k.CAData = b
		return true
	}); err != nil {
		return err
	}
	hc, err := k.httpClient()
	if err != nil {
		return err
	}
	token := k.tokens[Admin]
	return testenv.WaitUntil(k.apiserver, 90*time.Second, func() bool {
		return httpOK(hc, k.URL+"/readyz", token) && httpOK(hc, k.URL+"/api/v1/namespaces/default", token)
	})
}

func (k *Server) httpClient() (*http.Client, error) {
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(k.CAData) {
		return nil, errors.New("kube-apiserver wrote an unreadable certificate")
	}
	return &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}}, nil
}

func httpOK(c *http.Client, url, token string) bool {
	req, err := http.NewRequest("GET", url, nil)
	if err != nil {
		return false
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := c.Do(req)
	if err != nil {
		return false
	}
	resp.Body.Close()
	return resp.StatusCode == http.StatusOK
}

func (k *Server) writeKubeconfig() error {
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters["helmstore-test"] = &clientcmdapi.Cluster{Server: k.URL, CertificateAuthorityData: k.CAData}
	for _, u := range append([]string{Admin}, Users...) {
		cfg.AuthInfos[u] = &clientcmdapi.AuthInfo{Token: k.tokens[u]}
		cfg.Contexts[u] = &clientcmdapi.Context{Cluster: "helmstore-test", AuthInfo: u, Namespace: "default"}
	}
	cfg.CurrentContext = Admin
	k.Kubeconfig = filepath.Join(k.dir, "kubeconfig")
	return clientcmd.WriteToFile(*cfg, k.Kubeconfig)
}

// Config returns a client configuration for user (Admin or one of
// Users), without client-side rate limiting.
func (k *Server) Config(user string) *rest.Config {
	tok, ok := k.tokens[user]
	if !ok {
		panic("testenv: unknown Kubernetes user " + user)
	}
	return &rest.Config{
		Host:            k.URL,
		BearerToken:     tok,
		TLSClientConfig: rest.TLSClientConfig{CAData: k.CAData},
		QPS:             -1,
		UserAgent:       "helmstore-test",
	}
}

// Getter returns a RESTClientGetter, as Helm builds from its flags, for the
// server's kubeconfig with context set to user and the given namespace.
func (k *Server) Getter(user, namespace string) genericclioptions.RESTClientGetter {
	f := genericclioptions.NewConfigFlags(false)
	f.KubeConfig = &k.Kubeconfig
	f.Context = &user
	f.Namespace = &namespace
	return f
}

// Dir is the server's working directory (logs, certificates, kubeconfig).
func (k *Server) Dir() string { return k.dir }

func (k *Server) stopProcs() {
	k.apiserver.Stop(10 * time.Second)
	k.etcd.Stop(10 * time.Second)
	k.apiserver, k.etcd = nil, nil
}

// Stop ends the servers and removes their directory.
func (k *Server) Stop() {
	if k == nil {
		return
	}
	k.stopProcs()
	for _, d := range append(k.extraDirs, k.dir) {
		if d != "" {
			os.RemoveAll(d)
		}
	}
}

// StartControllerManager runs kube-controller-manager against k with only
// the named controllers (for example "garbage-collector-controller") until t
// ends. It returns once the controllers have started; the garbage collector
// once its resource monitors have synced.
func (k *Server) StartControllerManager(t testing.TB, controllers ...string) {
	t.Helper()
	n := 0
	for {
		if _, err := os.Stat(filepath.Join(k.dir, fmt.Sprintf("kube-controller-manager-%d.log", n))); err != nil {
			break
		}
		n++
	}
	name := fmt.Sprintf("kube-controller-manager-%d", n)
	p, err := testenv.StartProc(k.dir, name, filepath.Join(k.bin, kubeControllerManager),
		"--kubeconfig="+k.Kubeconfig,
		"--controllers="+strings.Join(controllers, ","),
		"--leader-elect=false",
		"--secure-port=0",
		"--kube-api-qps=200", "--kube-api-burst=400")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Stop(10 * time.Second) })
	marker := "Started controller"
	for _, c := range controllers {
		if c == "garbage-collector-controller" {
			marker = "Proceeding to collect garbage"
		}
	}
	if err := testenv.WaitUntil(p, 90*time.Second, func() bool {
		b, _ := os.ReadFile(p.LogFile())
		return strings.Contains(string(b), marker)
	}); err != nil {
		t.Fatalf("kube-controller-manager did not start: %v", err)
	}
}

var kubeShared struct {
	once sync.Once
	k    *Server
	err  error
}

// Kube returns the test binary's shared Server, started on first use (a
// failure to start is reported through Unavailable). Call Stop from
// TestMain after m.Run.
func Kube(t testing.TB) *Server {
	t.Helper()
	kubeShared.once.Do(func() {
		start := time.Now()
		kubeShared.k, kubeShared.err = Start()
		if kubeShared.err == nil {
			fmt.Fprintf(os.Stderr, "testenv: kube-apiserver ready at %s in %s, on %s\n", kubeShared.k.URL, time.Since(start).Round(100*time.Millisecond), kubeShared.k.etcdBin)
		}
	})
	if kubeShared.err != nil {
		testenv.Unavailable(t, "kube-apiserver", kubeShared.err)
	}
	return kubeShared.k
}

// Stop stops the shared Server, if Kube started one.
func Stop() {
	kubeShared.k.Stop()
}
