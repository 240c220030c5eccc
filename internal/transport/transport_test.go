package transport

import (
	"encoding/pem"
	"flag"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// flags adapts a flag.FlagSet to FlagSet.
type flags struct{ *flag.FlagSet }

func (flags) AddExtraUsage(string) {}

func TestTransport(t *testing.T) {
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { io.WriteString(w, "profile") }))
	defer srv.Close()
	ca := filepath.Join(t.TempDir(), "ca.pem")
	pemCert := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw})
	if err := os.WriteFile(ca, pemCert, 0o644); err != nil {
		t.Fatal(err)
	}
	secure := srv.URL
	insecure := strings.Replace(srv.URL, "https://", "https+insecure://", 1)
	for _, tc := range []struct {
		name    string
		args    []string
		url     string
		wantErr string
	}{
		{name: "unknown authority", url: secure, wantErr: "certificate"},
		{name: "https+insecure", url: insecure},
		{name: "-tls_ca", args: []string{"-tls_ca", ca}, url: secure},
		{name: "-tls_cert without -tls_key", args: []string{"-tls_cert", ca}, url: secure, wantErr: "-tls_key must also be specified"},
		{name: "missing CA file", args: []string{"-tls_ca", ca + ".missing"}, url: secure, wantErr: "could not load CA"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fs := flag.NewFlagSet("pprof", flag.ContinueOnError)
			tr := New(flags{fs})
			if err := fs.Parse(tc.args); err != nil {
				t.Fatal(err)
			}
			resp, err := (&http.Client{Transport: tr}).Get(tc.url)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("Get error = %v, want one containing %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			if body, _ := io.ReadAll(resp.Body); string(body) != "profile" {
				t.Errorf("body %q, want profile", body)
			}
		})
	}
}
