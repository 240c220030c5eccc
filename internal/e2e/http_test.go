package e2e

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// TestHTTPSources checks the http sources go tool pprof users rely on:
// a bare host:port means the CPU profile handler, -seconds becomes the
// "seconds" parameter, and a remote gperftools profile without symbols
// is symbolized through the server's symbol handler (symbolz).
func TestHTTPSources(t *testing.T) {
	goCPU, _ := goProfiles(t)
	cpuData, err := os.ReadFile(goCPU)
	if err != nil {
		t.Fatal(err)
	}
	// A gperftools heap profile with no memory map: pprof can only get
	// names from the server.
	const heap = "heap profile:    2:      300 [     2:      300] @ heapprofile\n" +
		"     1:      100 [     1:      100] @ 0x1001 0x2001\n" +
		"     1:      200 [     1:      200] @ 0x2001\n"
	var mu sync.Mutex
	var requests []string
	mux := http.NewServeMux()
	mux.HandleFunc("/debug/pprof/profile", func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		requests = append(requests, r.URL.String())
		mu.Unlock()
		w.Write(cpuData)
	})
	mux.HandleFunc("/pprof/heap", func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, heap)
	})
	mux.HandleFunc("/pprof/symbol", func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost {
			io.WriteString(w, "num_symbols: 1\n")
			return
		}
		body, _ := io.ReadAll(r.Body)
		for _, a := range strings.Split(string(body), "+") {
			switch a {
			case "0x1000":
				io.WriteString(w, "0x1000 leafAllocator\n")
			case "0x2000":
				io.WriteString(w, "0x2000 serverMain\n")
			}
		}
	})
	srv := httptest.NewServer(mux)
	defer srv.Close()
	hostport := strings.TrimPrefix(srv.URL, "http://")
	work := t.TempDir()

	t.Run("host:port is the CPU profile handler", func(t *testing.T) {
		r := run(pprofCmd(t, work, nil, "-top", "-seconds=1", hostport))
		if r.err != nil {
			t.Fatalf("pprof failed: %v\n%s", r.err, r.stderr)
		}
		want := fmt.Sprintf("Fetching profile over HTTP from http://%s/debug/pprof/profile?seconds=1", hostport)
		if !strings.Contains(string(r.stderr), want) {
			t.Errorf("stderr %q does not contain %q", r.stderr, want)
		}
		mu.Lock()
		got := strings.Join(requests, " ")
		mu.Unlock()
		if got != "/debug/pprof/profile?seconds=1" {
			t.Errorf("server got requests %q, want one for /debug/pprof/profile?seconds=1", got)
		}
		if !strings.Contains(string(r.stdout), "flat%") {
			t.Errorf("no -top report in %q", r.stdout)
		}
	})

	t.Run("symbolz", func(t *testing.T) {
		r := run(pprofCmd(t, work, nil, "-top", srv.URL+"/pprof/heap"))
		if r.err != nil {
			t.Fatalf("pprof failed: %v\n%s", r.err, r.stderr)
		}
		for _, name := range []string{"leafAllocator", "serverMain"} {
			if !strings.Contains(string(r.stdout), name) {
				t.Errorf("-top output lacks %s, which only the server's symbol handler knows:\n%s", name, r.stdout)
			}
		}
	})

	t.Run("existing file with a colon is a file", func(t *testing.T) {
		name := hostport // looks exactly like a host:port source
		if err := os.WriteFile(filepath.Join(work, name), []byte(heap), 0o644); err != nil {
			t.Fatal(err)
		}
		r := run(pprofCmd(t, work, nil, "-top", "-symbolize=none", name))
		if r.err != nil {
			t.Fatalf("pprof failed: %v\n%s", r.err, r.stderr)
		}
		if strings.Contains(string(r.stderr), "Fetching profile over HTTP") {
			t.Errorf("fetched %s over HTTP, want the local file: %s", name, r.stderr)
		}
		if !strings.Contains(string(r.stdout), "300B total") {
			t.Errorf("-top output is not the local heap profile's:\n%s", r.stdout)
		}
	})
}
