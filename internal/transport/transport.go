// Package transport is the HTTP transport pprof uses to fetch profiles
// and symbols: it adds the -tls_cert, -tls_key and -tls_ca flags and the
// "https+insecure" URL scheme, which skips certificate verification.
//
// Upstream pprof has the same transport internally; jitpprof fetches
// profiles itself (so that every source goes through the JIT stage), so
// it needs its own, and hands it to upstream for symbolz requests too.
package transport

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net/http"
	"os"
	"sync"
)

// FlagSet is the part of pprof's flag set the transport needs.
type FlagSet interface {
	String(name string, def string, usage string) *string
	AddExtraUsage(eu string)
}

// usage is the help text for the transport's flags.
const usage = `    -tls_cert             TLS client certificate file for fetching profile and symbols
    -tls_key              TLS private key file for fetching profile and symbols
    -tls_ca               TLS CA certs file for fetching profile and symbols`

// Transport is an http.RoundTripper configured by the TLS flags. Its
// configuration is read at the first request, after flags are parsed.
type Transport struct {
	cert, key, ca *string

	once             sync.Once
	err              error
	secure, insecure *http.Transport
}

// New returns a Transport whose flags are defined on flags. With nil
// flags, it uses no client certificate and the system CA pool.
func New(flags FlagSet) *Transport {
	if flags == nil {
		return &Transport{}
	}
	flags.AddExtraUsage(usage)
	return &Transport{
		cert: flags.String("tls_cert", "", "TLS client certificate file for fetching profile and symbols"),
		key:  flags.String("tls_key", "", "TLS private key file for fetching profile and symbols"),
		ca:   flags.String("tls_ca", "", "TLS CA certs file for fetching profile and symbols"),
	}
}

func value(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

func (t *Transport) load() error {
	cert, key, ca := value(t.cert), value(t.key), value(t.ca)
	var certs []tls.Certificate
	var pool *x509.CertPool
	switch {
	case cert != "" && key != "":
		c, err := tls.LoadX509KeyPair(cert, key)
		if err != nil {
			return fmt.Errorf("could not load certificate/key pair specified by -tls_cert and -tls_key: %w", err)
		}
		certs = []tls.Certificate{c}
	case cert != "":
		return errors.New("-tls_cert is specified, so -tls_key must also be specified")
	case key != "":
		return errors.New("-tls_key is specified, so -tls_cert must also be specified")
	}
	if ca != "" {
		pem, err := os.ReadFile(ca)
		if err != nil {
			return fmt.Errorf("could not load CA specified by -tls_ca: %w", err)
		}
		pool = x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return fmt.Errorf("-tls_ca %s: no PEM certificate found", ca)
		}
	}
	t.secure = &http.Transport{Proxy: http.ProxyFromEnvironment,
		TLSClientConfig: &tls.Config{RootCAs: pool, Certificates: certs}}
	t.insecure = &http.Transport{Proxy: http.ProxyFromEnvironment,
		TLSClientConfig: &tls.Config{RootCAs: pool, Certificates: certs, InsecureSkipVerify: true}}
	return nil
}

// RoundTrip sends one request. A URL with the scheme "https+insecure" is
// sent over https without verifying the server's certificate.
func (t *Transport) RoundTrip(req *http.Request) (*http.Response, error) {
	t.once.Do(func() { t.err = t.load() })
	if t.err != nil {
		return nil, t.err
	}
	if req.URL.Scheme == "https+insecure" {
		r := req.Clone(req.Context())
		r.URL.Scheme = "https"
		return t.insecure.RoundTrip(r)
	}
	return t.secure.RoundTrip(req)
}
