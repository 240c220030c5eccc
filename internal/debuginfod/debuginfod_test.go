package debuginfod

import (
	"bytes"
	"context"
	"debug/elf"
	"encoding/hex"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jitpprof/pprof/internal/elfrel"
)

// debugFile returns a real ELF file with a build ID (a shared library of
// the bundled example) and that ID.
func debugFile(t *testing.T) ([]byte, []byte) {
	return elfFile(t, "../../testdata/mcjit/golden/bin/libleaf.so")
}

// elfFile returns the ELF file at path, which has a build ID, and the ID.
func elfFile(t *testing.T, path string) ([]byte, []byte) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	f, err := elf.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	id, err := elfrel.StdBuildID(f)
	if err != nil || len(id) == 0 {
		t.Fatalf("%s: build ID %x, %v", path, id, err)
	}
	return data, id
}

// server is a debuginfod server that answers with handle and counts its
// requests.
func server(t *testing.T, handle func(w http.ResponseWriter, r *http.Request)) (*httptest.Server, *atomic.Int32) {
	var n atomic.Int32
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n.Add(1)
		handle(w, r)
	}))
	t.Cleanup(s.Close)
	return s, &n
}

// serving answers /buildid/ID/debuginfo with data, and 404 otherwise.
func serving(id, data []byte) func(w http.ResponseWriter, r *http.Request) {
	return func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/buildid/"+hex.EncodeToString(id)+"/debuginfo" {
			http.NotFound(w, r)
			return
		}
		w.Write(data)
	}
}

func TestFetchAndCache(t *testing.T) {
	data, id := debugFile(t)
	s, n := server(t, serving(id, data))
	cache := t.TempDir()
	c := New(Options{URLs: []string{s.URL}, CacheDir: cache})
	path, err := c.Debuginfo(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	if want := filepath.Join(cache, hex.EncodeToString(id), "debuginfo"); path != want {
		t.Errorf("path %s, want %s (elfutils' layout)", path, want)
	}
	if got, err := os.ReadFile(path); err != nil || !bytes.Equal(got, data) {
		t.Errorf("cached file differs from the one served (%v)", err)
	}
	if _, err := c.Debuginfo(context.Background(), id); err != nil || n.Load() != 1 {
		t.Errorf("asked again: %v, %d requests, want 1", err, n.Load())
	}
	// Another client, another run: the cache answers.
	if p, err := New(Options{URLs: []string{s.URL}, CacheDir: cache}).Debuginfo(context.Background(), id); err != nil || p != path || n.Load() != 1 {
		t.Errorf("another client: %s, %v, %d requests; want the cached file and no request", p, err, n.Load())
	}
	entries, _ := os.ReadDir(filepath.Dir(path))
	if len(entries) != 1 {
		t.Errorf("cache directory holds %d files, want the debuginfo alone", len(entries))
	}
}

// TestFetchELF32: a 32-bit executable's debug file is kept too.
func TestFetchELF32(t *testing.T) {
	data, id := elfFile(t, "../objtool/testdata/foreign/elf32")
	s, _ := server(t, serving(id, data))
	if _, err := New(Options{URLs: []string{s.URL}, CacheDir: t.TempDir()}).Debuginfo(context.Background(), id); err != nil {
		t.Error(err)
	}
}

func TestServersInOrder(t *testing.T) {
	data, id := debugFile(t)
	s1, n1 := server(t, http.NotFound)
	s2, n2 := server(t, serving(id, data))
	c := New(Options{URLs: []string{s1.URL, s2.URL}, CacheDir: t.TempDir()})
	if _, err := c.Debuginfo(context.Background(), id); err != nil || n1.Load() != 1 || n2.Load() != 1 {
		t.Errorf("%v; %d and %d requests, want 1 each", err, n1.Load(), n2.Load())
	}
}

func TestMissRemembered(t *testing.T) {
	_, id := debugFile(t)
	s, n := server(t, http.NotFound)
	cache := t.TempDir()
	ask := func() error {
		_, err := New(Options{URLs: []string{s.URL}, CacheDir: cache}).Debuginfo(context.Background(), id)
		return err
	}
	if err := ask(); !errors.Is(err, ErrNotFound) {
		t.Fatalf("got %v, want ErrNotFound", err)
	}
	st, err := os.Stat(filepath.Join(cache, hex.EncodeToString(id), "debuginfo"))
	if err != nil || st.Size() != 0 || st.Mode().Perm() != 0 {
		t.Fatalf("miss not marked as elfutils marks it (empty, mode 0): %v %v", st, err)
	}
	if err := ask(); !errors.Is(err, ErrNotFound) || n.Load() != 1 {
		t.Errorf("second run: %v, %d requests; want ErrNotFound and no new request", err, n.Load())
	}
	// An expired mark: the server is asked again, and the mark renewed.
	mark := filepath.Join(cache, hex.EncodeToString(id), "debuginfo")
	old := time.Now().Add(-2 * DefaultMissTTL)
	if err := os.Chtimes(mark, old, old); err != nil {
		t.Fatal(err)
	}
	if err := ask(); !errors.Is(err, ErrNotFound) || n.Load() != 2 {
		t.Errorf("expired: %v, %d requests; want a new request", err, n.Load())
	}
	if err := ask(); !errors.Is(err, ErrNotFound) || n.Load() != 2 {
		t.Errorf("renewed: %v, %d requests; want no new request", err, n.Load())
	}
	// cache_miss_s 0: the miss is forgotten at once.
	if err := os.WriteFile(filepath.Join(cache, "cache_miss_s"), []byte("0\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := ask(); !errors.Is(err, ErrNotFound) || n.Load() != 3 {
		t.Errorf("with cache_miss_s 0: %v, %d requests; want a new request", err, n.Load())
	}
}

// TestBadAnswers: what a server must not be trusted with. Each fails
// naming the server, leaves nothing in the cache (not even a miss), and
// returns in well under the timeouts' sum.
func TestBadAnswers(t *testing.T) {
	data, id := debugFile(t)
	_, otherID := debugFile(t)
	otherID = append([]byte(nil), otherID...)
	otherID[0] ^= 0xff
	// stall blocks a handler until its test ends (before its server
	// closes: cleanups run last first).
	var stall chan struct{}
	for _, c := range []struct {
		name    string
		handle  func(w http.ResponseWriter, r *http.Request)
		maxSize int64
		want    string
	}{
		{"another build ID", func(w http.ResponseWriter, r *http.Request) { w.Write(data) }, 0, "the file sent has build ID"},
		{"not ELF", func(w http.ResponseWriter, r *http.Request) { w.Write([]byte("<html>no</html>")) }, 0, "not a debug file"},
		{"server error", func(w http.ResponseWriter, r *http.Request) { http.Error(w, "busy", http.StatusServiceUnavailable) }, 0, "503"},
		{"larger than MAXSIZE", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Length", strconv.Itoa(len(data)))
			w.Write(data)
		}, 100, strconv.Itoa(len(data)) + " bytes, more than DEBUGINFOD_MAXSIZE"},
		{"larger than MAXSIZE, no length", func(w http.ResponseWriter, r *http.Request) {
			if r.Header.Get("X-DEBUGINFOD-MAXSIZE") != "100" {
				http.Error(w, "no X-DEBUGINFOD-MAXSIZE", http.StatusBadRequest)
				return
			}
			w.Write(data[:50])
			w.(http.Flusher).Flush()
			w.Write(data[50:])
		}, 100, "more than DEBUGINFOD_MAXSIZE"},
		// A server that accepts and never answers.
		{"no answer", func(w http.ResponseWriter, r *http.Request) { <-stall }, 0, "no byte in 300ms (DEBUGINFOD_TIMEOUT)"},
		{"headers, then nothing", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Length", strconv.Itoa(len(data)))
			w.WriteHeader(http.StatusOK)
			w.(http.Flusher).Flush()
			<-stall
		}, 0, "no byte in 300ms (DEBUGINFOD_TIMEOUT)"},
		{"stalls in the middle", func(w http.ResponseWriter, r *http.Request) {
			w.Write(data[:100])
			w.(http.Flusher).Flush()
			<-stall
		}, 0, "100 bytes in 300ms, less than 100 KiB (DEBUGINFOD_TIMEOUT)"},
		// Bytes that keep coming, too slowly: each resets a timeout of no
		// progress, which alone would wait for ever.
		{"trickles", func(w http.ResponseWriter, r *http.Request) {
			for {
				select {
				case <-stall:
					return
				case <-r.Context().Done():
					return
				case <-time.After(10 * time.Millisecond):
				}
				w.Write([]byte{0x7f})
				w.(http.Flusher).Flush()
			}
		}, 0, "less than 100 KiB (DEBUGINFOD_TIMEOUT)"},
		{"redirect to a file URL", func(w http.ResponseWriter, r *http.Request) {
			http.Redirect(w, r, "file:///etc/passwd", http.StatusFound)
		}, 0, "redirected to file:///etc/passwd, not an http or https URL"},
		{"redirect loop", func(w http.ResponseWriter, r *http.Request) {
			http.Redirect(w, r, r.URL.Path+"x", http.StatusFound)
		}, 0, "more than 10 redirects"},
		// A redirect to a server that stalls is under the same limits.
		{"redirect to a stall", func(w http.ResponseWriter, r *http.Request) {
			if !strings.HasSuffix(r.URL.Path, "/stall") {
				http.Redirect(w, r, r.URL.Path+"/stall", http.StatusFound)
				return
			}
			<-stall
		}, 0, "no byte in 300ms (DEBUGINFOD_TIMEOUT)"},
	} {
		t.Run(c.name, func(t *testing.T) {
			s, _ := server(t, c.handle)
			stall = make(chan struct{})
			t.Cleanup(func() { close(stall) })
			cache := t.TempDir()
			cl := New(Options{URLs: []string{s.URL}, CacheDir: cache, Timeout: 300 * time.Millisecond, MaxSize: c.maxSize})
			ask := id
			if c.name == "another build ID" {
				ask = otherID // the server sends id's file
			}
			start := time.Now()
			_, err := cl.Debuginfo(context.Background(), ask)
			if err == nil || errors.Is(err, ErrNotFound) || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), s.URL) {
				t.Errorf("got %v, want an error naming %s and saying %q", err, s.URL, c.want)
			}
			if el := time.Since(start); el > 5*time.Second {
				t.Errorf("took %v", el)
			}
			entries, _ := os.ReadDir(filepath.Join(cache, hex.EncodeToString(ask)))
			if len(entries) != 0 {
				t.Errorf("left %d files in the cache", len(entries))
			}
		})
	}
}

// TestRates: a download at a steady 100 KiB per timeout or more goes on
// until it ends or DEBUGINFOD_MAXTIME, whichever comes first.
func TestRates(t *testing.T) {
	data, id := debugFile(t)
	// An ELF file with bytes after its end is still one.
	padded := append(bytes.Clone(data), make([]byte, max(0, 450<<10-len(data)))...)
	for _, c := range []struct {
		name    string
		chunk   int           // bytes sent at a time
		every   time.Duration // between chunks
		maxTime time.Duration
		want    string // "" if it must succeed
		least   time.Duration
	}{
		{name: "slow, fast enough", chunk: 110 << 10, every: 200 * time.Millisecond, maxTime: 10 * time.Second, least: 600 * time.Millisecond},
		{name: "fast enough, too long", chunk: 110 << 10, every: 200 * time.Millisecond, maxTime: 500 * time.Millisecond,
			want: "not done in 500ms (DEBUGINFOD_MAXTIME)", least: 500 * time.Millisecond},
		{name: "too slow", chunk: 30 << 10, every: 100 * time.Millisecond, maxTime: 10 * time.Second,
			want: "less than 100 KiB (DEBUGINFOD_TIMEOUT)", least: 300 * time.Millisecond},
	} {
		t.Run(c.name, func(t *testing.T) {
			s, _ := server(t, func(w http.ResponseWriter, r *http.Request) {
				for rest := padded; len(rest) > 0; {
					n := min(c.chunk, len(rest))
					if _, err := w.Write(rest[:n]); err != nil {
						return
					}
					w.(http.Flusher).Flush()
					if rest = rest[n:]; len(rest) == 0 {
						return
					}
					select {
					case <-r.Context().Done():
						return
					case <-time.After(c.every):
					}
				}
			})
			cl := New(Options{URLs: []string{s.URL}, CacheDir: t.TempDir(), Timeout: 300 * time.Millisecond, MaxTime: c.maxTime})
			start := time.Now()
			_, err := cl.Debuginfo(context.Background(), id)
			el := time.Since(start)
			if c.want == "" && err != nil || c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)) {
				t.Errorf("got %v, want %q", err, c.want)
			}
			if el < c.least || el > c.least+5*time.Second {
				t.Errorf("took %v, want about %v", el, c.least)
			}
		})
	}
}

func TestFromEnv(t *testing.T) {
	for _, c := range []struct {
		name    string
		env     map[string]string
		nilC    bool
		urls    []string
		cache   string
		timeout time.Duration
		maxTime time.Duration
		maxSize int64
		err     string
	}{
		{name: "unset", env: nil, nilC: true},
		{name: "no http URL", env: map[string]string{"DEBUGINFOD_URLS": "file:///srv ima:enforcing"}, nilC: true},
		{name: "two servers", env: map[string]string{"DEBUGINFOD_URLS": " https://a.example/  http://b.example:8002 ", "HOME": "/home/u"},
			urls: []string{"https://a.example", "http://b.example:8002"}, cache: "/home/u/.cache/debuginfod_client",
			timeout: DefaultTimeout, maxTime: DefaultMaxTime, maxSize: DefaultMaxSize},
		{name: "XDG", env: map[string]string{"DEBUGINFOD_URLS": "http://a", "HOME": "/home/u", "XDG_CACHE_HOME": "/x"},
			urls: []string{"http://a"}, cache: "/x/debuginfod_client", timeout: DefaultTimeout, maxTime: DefaultMaxTime, maxSize: DefaultMaxSize},
		{name: "cache path, limits", env: map[string]string{"DEBUGINFOD_URLS": "http://a", "HOME": "/home/u", "XDG_CACHE_HOME": "/x",
			"DEBUGINFOD_CACHE_PATH": "/c", "DEBUGINFOD_TIMEOUT": "5", "DEBUGINFOD_MAXTIME": "60", "DEBUGINFOD_MAXSIZE": "1000"},
			urls: []string{"http://a"}, cache: "/c", timeout: 5 * time.Second, maxTime: time.Minute, maxSize: 1000},
		// 0 or less is none, as in elfutils' client.
		{name: "no limits", env: map[string]string{"DEBUGINFOD_URLS": "http://a", "HOME": "/h",
			"DEBUGINFOD_TIMEOUT": "0", "DEBUGINFOD_MAXTIME": "-5", "DEBUGINFOD_MAXSIZE": "0"},
			urls: []string{"http://a"}, cache: "/h/.cache/debuginfod_client", timeout: -1, maxTime: -1, maxSize: -1},
		{name: "bad timeout", env: map[string]string{"DEBUGINFOD_URLS": "http://a", "HOME": "/h", "DEBUGINFOD_TIMEOUT": "5s"}, err: "DEBUGINFOD_TIMEOUT"},
		{name: "bad size", env: map[string]string{"DEBUGINFOD_URLS": "http://a", "HOME": "/h", "DEBUGINFOD_MAXSIZE": "4G"}, err: "DEBUGINFOD_MAXSIZE"},
		{name: "no cache", env: map[string]string{"DEBUGINFOD_URLS": "http://a"}, err: "no cache directory"},
	} {
		t.Run(c.name, func(t *testing.T) {
			cl, err := FromEnv(func(k string) string { return c.env[k] })
			if c.err != "" {
				if err == nil || !strings.Contains(err.Error(), c.err) {
					t.Errorf("got %v, want an error about %s", err, c.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if c.nilC {
				if cl != nil {
					t.Errorf("got a client for %v", cl.opts.URLs)
				}
				return
			}
			o := cl.opts
			if strings.Join(o.URLs, " ") != strings.Join(c.urls, " ") || o.CacheDir != c.cache || o.Timeout != c.timeout || o.MaxTime != c.maxTime || o.MaxSize != c.maxSize {
				t.Errorf("got %+v", o)
			}
		})
	}
}
