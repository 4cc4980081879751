package lifecycle

import (
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"net/http"
	"os"
)

// usesTLSFiles reports whether c asks for TLS settings of its own (a
// client certificate, a CA bundle or no verification), for which helm
// builds a registry client with its own HTTP client.
func (c Chart) usesTLSFiles() bool {
	return c.CertFile != "" && c.KeyFile != "" || c.CaFile != "" || c.InsecureSkipTLSVerify
}

// tlsHTTPClient is an HTTP client with c's TLS files, for a registry
// client, as helm builds one.
func (c Chart) tlsHTTPClient() (*http.Client, error) {
	cfg := &tls.Config{InsecureSkipVerify: c.InsecureSkipTLSVerify, MinVersion: tls.VersionTLS12} //nolint:gosec // --insecure-skip-tls-verify asks for it
	if c.CertFile != "" && c.KeyFile != "" {
		cert, err := tls.LoadX509KeyPair(c.CertFile, c.KeyFile)
		if err != nil {
			return nil, fmt.Errorf("can't create TLS config for client: unable to load cert from key pair: %w", err)
		}
		cfg.Certificates = []tls.Certificate{cert}
	}
	if c.CaFile != "" {
		pem, err := os.ReadFile(c.CaFile)
		if err != nil {
			return nil, fmt.Errorf("can't create TLS config for client: can't read CA file: %w", err)
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("can't create TLS config for client: failed to append certificates from file: %s", c.CaFile)
		}
		cfg.RootCAs = pool
	}
	return &http.Client{Transport: &http.Transport{TLSClientConfig: cfg, Proxy: http.ProxyFromEnvironment}}, nil
}
