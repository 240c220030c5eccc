// Package debuginfod fetches debug files by build ID from debuginfod
// servers, as elfutils' client (gdb, perf, eu-stack) and LLVM's
// (llvm-symbolizer, which upstream pprof runs) do when DEBUGINFOD_URLS
// is set: GET URL/buildid/BUILDID/debuginfo from each server in turn,
// the file kept in the client cache that elfutils' client shares,
// CACHE/BUILDID/debuginfo, so that what gdb fetched is not fetched again.
//
// A file a server sends is used only if it is an ELF file with the build
// ID asked for; a download that makes no progress for the timeout, or
// grows past the size limit, is abandoned. A build ID that no server
// has is remembered for a while the way elfutils remembers it (an empty
// file, mode 0, at its place in the cache), so that a profile's binaries
// without debug files are not asked for on every run.
//
// Protocol: https://sourceware.org/elfutils/Debuginfod.html; the
// environment variables: debuginfod-client-config(7).
package debuginfod

import (
	"bytes"
	"context"
	"debug/elf"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/jitpprof/pprof/internal/elfrel"
	"github.com/jitpprof/pprof/internal/oncemap"
	"github.com/jitpprof/pprof/internal/safename"
)

// ErrNotFound is the error of a build ID that no server has.
var ErrNotFound = errors.New("no debuginfod server has it")

// DefaultTimeout is how long a download may make no progress, as with
// elfutils' client (DEBUGINFOD_TIMEOUT).
const DefaultTimeout = 90 * time.Second

// DefaultMissTTL is how long a build ID that no server had is not asked
// for again, as with elfutils' client (its cache's cache_miss_s).
const DefaultMissTTL = 600 * time.Second

// Options configures a Client.
type Options struct {
	// URLs are the servers, asked in order.
	URLs []string
	// CacheDir is the client cache: CacheDir/BUILDID/debuginfo.
	CacheDir string
	// Timeout abandons a request that makes no progress (no response,
	// no data) for this long; 0 means DefaultTimeout.
	Timeout time.Duration
	// MaxTime, if not 0, abandons a request that takes longer.
	MaxTime time.Duration
	// MaxSize, if not 0, abandons a file larger than this many bytes.
	MaxSize int64
	// Transport makes the requests; nil means http.DefaultTransport.
	Transport http.RoundTripper
}

// A Client fetches debug files. Its methods may be called from any
// number of goroutines; each build ID is fetched at most once per Client.
type Client struct {
	opts    Options
	client  *http.Client
	fetched oncemap.Map[string, result]
}

type result struct {
	path string
	err  error
}

// New returns a Client configured by o.
func New(o Options) *Client {
	if o.Timeout <= 0 {
		o.Timeout = DefaultTimeout
	}
	if o.Transport == nil {
		o.Transport = http.DefaultTransport
	}
	return &Client{opts: o, client: &http.Client{Transport: o.Transport}}
}

// FromEnv returns the Client that the environment, read with getenv,
// asks for, or nil if DEBUGINFOD_URLS names no server: the URLs in
// DEBUGINFOD_URLS (separated by spaces; those not http or https are
// left out), the cache at DEBUGINFOD_CACHE_PATH, else
// $XDG_CACHE_HOME/debuginfod_client, else ~/.cache/debuginfod_client,
// DEBUGINFOD_TIMEOUT and DEBUGINFOD_MAXTIME in seconds and
// DEBUGINFOD_MAXSIZE in bytes. A malformed number is an error.
func FromEnv(getenv func(string) string) (*Client, error) {
	var o Options
	for _, u := range strings.Fields(getenv("DEBUGINFOD_URLS")) {
		if strings.HasPrefix(u, "http://") || strings.HasPrefix(u, "https://") {
			o.URLs = append(o.URLs, strings.TrimRight(u, "/"))
		}
	}
	if len(o.URLs) == 0 {
		return nil, nil
	}
	switch {
	case getenv("DEBUGINFOD_CACHE_PATH") != "":
		o.CacheDir = getenv("DEBUGINFOD_CACHE_PATH")
	case getenv("XDG_CACHE_HOME") != "":
		o.CacheDir = filepath.Join(getenv("XDG_CACHE_HOME"), "debuginfod_client")
	case getenv("HOME") != "":
		o.CacheDir = filepath.Join(getenv("HOME"), ".cache", "debuginfod_client")
	default:
		return nil, errors.New("debuginfod: no cache directory: set DEBUGINFOD_CACHE_PATH or HOME")
	}
	for _, v := range []struct {
		name string
		dst  *time.Duration
	}{{"DEBUGINFOD_TIMEOUT", &o.Timeout}, {"DEBUGINFOD_MAXTIME", &o.MaxTime}} {
		if s := getenv(v.name); s != "" {
			n, err := strconv.ParseUint(s, 10, 32)
			if err != nil {
				return nil, fmt.Errorf("debuginfod: %s=%q: want a number of seconds", v.name, s)
			}
			*v.dst = time.Duration(n) * time.Second
		}
	}
	if s := getenv("DEBUGINFOD_MAXSIZE"); s != "" {
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil || n < 0 {
			return nil, fmt.Errorf("debuginfod: DEBUGINFOD_MAXSIZE=%q: want a number of bytes", s)
		}
		o.MaxSize = n
	}
	return New(o), nil
}

// Debuginfo returns the path of the debug file of the build ID id, from
// the cache or fetched into it; the error is ErrNotFound (wrapped) when
// no server has it, else it says what went wrong, naming the server.
func (c *Client) Debuginfo(ctx context.Context, id []byte) (string, error) {
	if len(id) == 0 {
		return "", errors.New("debuginfod: no build ID")
	}
	h := hex.EncodeToString(id)
	r, _ := c.fetched.Get(h, func() result {
		path, err := c.fetch(ctx, h, id)
		return result{path, err}
	})
	return r.path, r.err
}

// fetch is Debuginfo without the once-per-Client.
func (c *Client) fetch(ctx context.Context, h string, id []byte) (string, error) {
	dir := filepath.Join(c.opts.CacheDir, h)
	path := filepath.Join(dir, "debuginfo")
	if st, err := os.Stat(path); err == nil && st.Mode().IsRegular() {
		if st.Size() > 0 {
			return path, nil
		}
		if st.Mode().Perm() == 0 && time.Since(st.ModTime()) < c.missTTL() {
			return "", fmt.Errorf("debuginfod: build ID %s: %w (remembered in %s)", h, ErrNotFound, safename.String(path))
		}
	}
	var errs []error
	for _, u := range c.opts.URLs {
		err := c.get(ctx, u+"/buildid/"+h+"/debuginfo", dir, path, id)
		if err == nil {
			return path, nil
		}
		if !errors.Is(err, ErrNotFound) {
			errs = append(errs, err)
		}
	}
	if len(errs) > 0 {
		return "", errors.Join(errs...)
	}
	c.rememberMiss(dir, path)
	return "", fmt.Errorf("debuginfod: build ID %s: %w", h, ErrNotFound)
}

// missTTL returns how long a miss is remembered: the cache's
// cache_miss_s if it has one (elfutils writes it), else DefaultMissTTL.
func (c *Client) missTTL() time.Duration {
	b, err := os.ReadFile(filepath.Join(c.opts.CacheDir, "cache_miss_s"))
	if err != nil {
		return DefaultMissTTL
	}
	n, err := strconv.ParseUint(strings.TrimSpace(string(b)), 10, 32)
	if err != nil {
		return DefaultMissTTL
	}
	return time.Duration(n) * time.Second
}

// rememberMiss writes elfutils' mark of a miss at path, in place of one
// that expired: an empty file, mode 0, whose time says when. Failing to
// is not an error: the next run asks again.
func (c *Client) rememberMiss(dir, path string) {
	if os.MkdirAll(dir, 0o755) != nil {
		return
	}
	if st, err := os.Lstat(path); err == nil && st.Mode().IsRegular() && st.Size() == 0 {
		os.Remove(path)
	}
	if f, err := os.OpenFile(path, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0); err == nil {
		f.Close()
	}
}

// get downloads url into path, in dir, through a temporary file, and
// checks that it is an ELF file with build ID id. A 404 is ErrNotFound.
func (c *Client) get(ctx context.Context, url, dir, path string, id []byte) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	if c.opts.MaxTime > 0 {
		ctx, cancel = context.WithTimeout(ctx, c.opts.MaxTime)
		defer cancel()
	}
	// The timeout is of no progress: a timer, reset by every read,
	// cancels the request when it fires.
	idle := newIdleTimer(c.opts.Timeout, cancel)
	defer idle.stop()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return fmt.Errorf("debuginfod: %w", err)
	}
	req.Header.Set("User-Agent", "jitpprof")
	if c.opts.MaxSize > 0 {
		req.Header.Set("X-DEBUGINFOD-MAXSIZE", strconv.FormatInt(c.opts.MaxSize, 10))
	}
	fail := func(format string, args ...any) error {
		if idle.fired() {
			format, args = "no progress for %v", []any{c.opts.Timeout}
		}
		return fmt.Errorf("debuginfod: %s: %s", safename.String(url), fmt.Sprintf(format, args...))
	}
	resp, err := c.client.Do(req)
	if err != nil {
		return fail("%v", err)
	}
	defer resp.Body.Close()
	switch {
	case resp.StatusCode == http.StatusNotFound:
		return ErrNotFound
	case resp.StatusCode != http.StatusOK:
		return fail("%s", resp.Status)
	case c.opts.MaxSize > 0 && resp.ContentLength > c.opts.MaxSize:
		return fail("%d bytes, more than DEBUGINFOD_MAXSIZE (%d)", resp.ContentLength, c.opts.MaxSize)
	}
	idle.reset()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("debuginfod: %w", err)
	}
	tmp, err := os.CreateTemp(dir, "debuginfo.*.tmp")
	if err != nil {
		return fmt.Errorf("debuginfod: %w", err)
	}
	defer os.Remove(tmp.Name()) // after the rename, nothing
	var body io.Reader = &progressReader{r: resp.Body, idle: idle}
	if c.opts.MaxSize > 0 {
		body = io.LimitReader(body, c.opts.MaxSize+1)
	}
	n, err := io.Copy(tmp, body)
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	switch {
	case err != nil:
		return fail("%v", err)
	case c.opts.MaxSize > 0 && n > c.opts.MaxSize:
		return fail("more than DEBUGINFOD_MAXSIZE (%d bytes)", c.opts.MaxSize)
	}
	if err := checkBuildID(tmp.Name(), id); err != nil {
		return fail("%v", err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return fmt.Errorf("debuginfod: %w", err)
	}
	return nil
}

// checkBuildID reports an error unless the file at path is an ELF file
// (of any class and type) with build ID id.
func checkBuildID(path string, id []byte) error {
	f, err := elf.Open(path)
	if err != nil {
		return fmt.Errorf("not a debug file: %w", err)
	}
	defer f.Close()
	got, err := elfrel.StdBuildID(f)
	if err != nil {
		return fmt.Errorf("not a debug file: %w", err)
	}
	if !bytes.Equal(got, id) {
		return fmt.Errorf("the file sent has build ID %x", got)
	}
	return nil
}

// An idleTimer calls cancel once d passes without a reset.
type idleTimer struct {
	d      time.Duration
	t      *time.Timer
	mu     sync.Mutex
	isDone bool
}

func newIdleTimer(d time.Duration, cancel func()) *idleTimer {
	it := &idleTimer{d: d}
	it.t = time.AfterFunc(d, func() {
		it.mu.Lock()
		it.isDone = true
		it.mu.Unlock()
		cancel()
	})
	return it
}

func (it *idleTimer) reset() { it.t.Reset(it.d) }
func (it *idleTimer) stop()  { it.t.Stop() }

func (it *idleTimer) fired() bool {
	it.mu.Lock()
	defer it.mu.Unlock()
	return it.isDone
}

// progressReader resets idle at every read that returns data.
type progressReader struct {
	r    io.Reader
	idle *idleTimer
}

func (p *progressReader) Read(b []byte) (int, error) {
	n, err := p.r.Read(b)
	if n > 0 {
		p.idle.reset()
	}
	return n, err
}
