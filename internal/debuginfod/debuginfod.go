// Package debuginfod fetches debug files by build ID from debuginfod
// servers, as elfutils' client (gdb, perf, eu-stack) and LLVM's
// (llvm-symbolizer, which upstream pprof runs) do when DEBUGINFOD_URLS
// is set: GET URL/buildid/BUILDID/debuginfo from each server in turn,
// the file kept in the client cache that elfutils' client shares,
// CACHE/BUILDID/debuginfo, so that what gdb fetched is not fetched again.
//
// A file a server sends is used only if it is an ELF file with the build
// ID asked for. A server cannot hold the client as long as it likes: by
// default a download is abandoned, with an error naming the server and
// the limit, if its first byte does not come within 90 s, if after that
// 100 KiB take longer than 90 s (elfutils' client gives up on both), if
// it takes more than 300 s in all, or if the file is larger than 4 GiB;
// redirects are followed only to http and https URLs, at most 10, the
// same limits counting from the first request. A build ID that no server has is remembered for a while the way elfutils remembers it (an empty
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
	"github.com/jitpprof/pprof/internal/regfile"
	"github.com/jitpprof/pprof/internal/safename"
)

// ErrNotFound is the error of a build ID that no server has.
var ErrNotFound = errors.New("no debuginfod server has it")

// Defaults of Options, and of the environment variables of elfutils'
// client that set them. DefaultTimeout is elfutils' (and LLVM's, whose
// llvm-symbolizer upstream pprof runs): a server may take that long to
// extract a large debug file from a package before its first byte.
// DefaultMaxTime and DefaultMaxSize are jitpprof's (elfutils sets none):
// a debug file that takes more than 5 minutes is not worth a profile
// report waiting for it (the next run asks again), and none is larger
// than a few GiB.
const (
	DefaultTimeout = 90 * time.Second
	DefaultMaxTime = 300 * time.Second
	DefaultMaxSize = 4 << 30
)

// minProgress is the least a download must receive in each Timeout
// after its first byte: elfutils' client has curl abandon transfers
// slower than 100 KiB per DEBUGINFOD_TIMEOUT.
const minProgress = 100 << 10

// maxRedirects is how many redirects a request follows, as Go's client
// does by default.
const maxRedirects = 10

// DefaultMissTTL is how long a build ID that no server had is not asked
// for again, as with elfutils' client (its cache's cache_miss_s).
const DefaultMissTTL = 600 * time.Second

// Options configures a Client.
type Options struct {
	// URLs are the servers, asked in order.
	URLs []string
	// CacheDir is the client cache: CacheDir/BUILDID/debuginfo.
	CacheDir string
	// Timeout abandons a request whose first byte does not come within
	// it, or that later receives less than 100 KiB in a Timeout; 0 means
	// DefaultTimeout, a negative value none (DEBUGINFOD_TIMEOUT).
	Timeout time.Duration
	// MaxTime abandons a request that takes longer; 0 means
	// DefaultMaxTime, a negative value none (DEBUGINFOD_MAXTIME).
	MaxTime time.Duration
	// MaxSize abandons a file larger than this many bytes; 0 means
	// DefaultMaxSize, a negative value none (DEBUGINFOD_MAXSIZE).
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
	if o.Timeout == 0 {
		o.Timeout = DefaultTimeout
	}
	if o.MaxTime == 0 {
		o.MaxTime = DefaultMaxTime
	}
	if o.MaxSize == 0 {
		o.MaxSize = DefaultMaxSize
	}
	if o.Transport == nil {
		o.Transport = http.DefaultTransport
	}
	return &Client{opts: o, client: &http.Client{Transport: o.Transport, CheckRedirect: checkRedirect}}
}

// checkRedirect follows a redirect only to an http or https URL, at most
// maxRedirects of them; the request's context, with its limits, goes
// with it.
func checkRedirect(req *http.Request, via []*http.Request) error {
	if req.URL.Scheme != "http" && req.URL.Scheme != "https" {
		return fmt.Errorf("redirected to %s, not an http or https URL", safename.String(req.URL.String()))
	}
	if len(via) >= maxRedirects {
		return fmt.Errorf("more than %d redirects", maxRedirects)
	}
	return nil
}

// FromEnv returns the Client that the environment, read with getenv,
// asks for, or nil if DEBUGINFOD_URLS names no server: the URLs in
// DEBUGINFOD_URLS (separated by spaces; those not http or https are
// left out), the cache at DEBUGINFOD_CACHE_PATH, else
// $XDG_CACHE_HOME/debuginfod_client, else ~/.cache/debuginfod_client,
// DEBUGINFOD_TIMEOUT and DEBUGINFOD_MAXTIME in seconds and
// DEBUGINFOD_MAXSIZE in bytes, 0 or less meaning none, as in elfutils'
// client. A malformed number is an error.
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
			n, err := strconv.ParseInt(s, 10, 32)
			if err != nil {
				return nil, fmt.Errorf("debuginfod: %s=%q: want a number of seconds", v.name, s)
			}
			*v.dst = time.Duration(max(n, 0)) * time.Second
			if n <= 0 {
				*v.dst = -1 // none
			}
		}
	}
	if s := getenv("DEBUGINFOD_MAXSIZE"); s != "" {
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			return nil, fmt.Errorf("debuginfod: DEBUGINFOD_MAXSIZE=%q: want a number of bytes", s)
		}
		o.MaxSize = n
		if n <= 0 {
			o.MaxSize = -1 // none
		}
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
	// Only a regular file, of a few bytes: the cache is a directory
	// others may write to.
	f, err := regfile.OpenLimited(filepath.Join(c.opts.CacheDir, "cache_miss_s"), 64)
	if err != nil {
		return DefaultMissTTL
	}
	b, err := io.ReadAll(f)
	f.Close()
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
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	if c.opts.MaxTime > 0 {
		var stop context.CancelFunc
		ctx, stop = context.WithTimeoutCause(ctx, c.opts.MaxTime, fmt.Errorf("not done in %v (DEBUGINFOD_MAXTIME)", c.opts.MaxTime))
		defer stop()
	}
	dog := newWatchdog(c.opts.Timeout, cancel)
	defer dog.stop()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return fmt.Errorf("debuginfod: %w", err)
	}
	req.Header.Set("User-Agent", "jitpprof")
	if c.opts.MaxSize > 0 {
		req.Header.Set("X-DEBUGINFOD-MAXSIZE", strconv.FormatInt(c.opts.MaxSize, 10))
	}
	fail := func(err error) error {
		if cause := context.Cause(ctx); cause != nil && !errors.Is(cause, context.Canceled) {
			err = cause // the limit that ended it, rather than how
		}
		return fmt.Errorf("debuginfod: %s: %w", safename.String(url), err)
	}
	resp, err := c.client.Do(req)
	if err != nil {
		return fail(err)
	}
	defer resp.Body.Close()
	switch {
	case resp.StatusCode == http.StatusNotFound:
		return ErrNotFound
	case resp.StatusCode != http.StatusOK:
		return fail(errors.New(resp.Status))
	case c.opts.MaxSize > 0 && resp.ContentLength > c.opts.MaxSize:
		return fail(fmt.Errorf("%d bytes, more than DEBUGINFOD_MAXSIZE (%d)", resp.ContentLength, c.opts.MaxSize))
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("debuginfod: %w", err)
	}
	tmp, err := os.CreateTemp(dir, "debuginfo.*.tmp")
	if err != nil {
		return fmt.Errorf("debuginfod: %w", err)
	}
	defer os.Remove(tmp.Name()) // after the rename, nothing
	var body io.Reader = &countingReader{r: resp.Body, dog: dog}
	if c.opts.MaxSize > 0 {
		body = io.LimitReader(body, c.opts.MaxSize+1)
	}
	n, err := io.Copy(tmp, body)
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	switch {
	case err != nil:
		return fail(err)
	case c.opts.MaxSize > 0 && n > c.opts.MaxSize:
		return fail(fmt.Errorf("more than DEBUGINFOD_MAXSIZE (%d bytes)", c.opts.MaxSize))
	}
	if err := checkBuildID(tmp.Name(), id); err != nil {
		return fail(err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return fmt.Errorf("debuginfod: %w", err)
	}
	return nil
}

// checkBuildID reports an error unless the file at path is an ELF file
// (of any class and type) with build ID id. A server's file is checked
// before debug/elf reads it (see elfrel.CheckStd).
func checkBuildID(path string, id []byte) error {
	fd, err := os.Open(path) // the temporary file, which get created
	if err != nil {
		return err
	}
	defer fd.Close()
	st, err := fd.Stat()
	if err != nil {
		return err
	}
	if err := elfrel.CheckStd(fd, uint64(st.Size())); err != nil {
		return fmt.Errorf("not a debug file: %w", err)
	}
	f, err := elf.NewFile(fd)
	if err != nil {
		return fmt.Errorf("not a debug file: %w", err)
	}
	got, err := elfrel.StdBuildID(f)
	if err != nil {
		return fmt.Errorf("not a debug file: %w", err)
	}
	if !bytes.Equal(got, id) {
		return fmt.Errorf("the file sent has build ID %x", got)
	}
	return nil
}

// A watchdog cancels a download that makes too little progress: whose
// first byte does not come within d of its start, or that later receives
// less than minProgress bytes in d. A d of 0 or less watches nothing.
type watchdog struct {
	d      time.Duration
	t      *time.Timer // nil if d is none
	mu     sync.Mutex
	first  bool  // the first byte came
	got    int64 // bytes since the timer was last reset
	cancel context.CancelCauseFunc
}

func newWatchdog(d time.Duration, cancel context.CancelCauseFunc) *watchdog {
	w := &watchdog{d: d, cancel: cancel}
	if d > 0 {
		w.t = time.AfterFunc(d, w.fire)
	}
	return w
}

func (w *watchdog) fire() {
	w.mu.Lock()
	defer w.mu.Unlock()
	if !w.first {
		w.cancel(fmt.Errorf("no byte in %v (DEBUGINFOD_TIMEOUT)", w.d))
		return
	}
	w.cancel(fmt.Errorf("%d bytes in %v, less than %d KiB (DEBUGINFOD_TIMEOUT)", w.got, w.d, minProgress>>10))
}

// read notes n bytes received.
func (w *watchdog) read(n int) {
	if w.t == nil || n == 0 {
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	switch {
	case !w.first: // the window of minProgress starts with it
		w.first, w.got = true, int64(n)
		w.t.Reset(w.d)
	case w.got+int64(n) >= minProgress:
		w.got = w.got + int64(n) - minProgress
		w.t.Reset(w.d)
	default:
		w.got += int64(n)
	}
}

func (w *watchdog) stop() {
	if w.t != nil {
		w.t.Stop()
	}
}

// countingReader tells its watchdog what it reads.
type countingReader struct {
	r   io.Reader
	dog *watchdog
}

func (c *countingReader) Read(b []byte) (int, error) {
	n, err := c.r.Read(b)
	c.dog.read(n)
	return n, err
}
