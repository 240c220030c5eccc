package driver

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/google/pprof/profile"
	"github.com/jitpprof/pprof/internal/perfconfig"
	"github.com/jitpprof/pprof/internal/perfdata"
	"github.com/jitpprof/pprof/internal/regfile"
	jprofile "github.com/jitpprof/pprof/profile"
)

// fetcher is the Fetcher jitpprof gives upstream pprof: it fetches every
// source itself, the way upstream would, so that every profile goes
// through the JIT stage.
type fetcher struct {
	run *run
}

// Fetch returns the profile named by src: the caller's Fetcher's answer
// if it has one, else the file src, else the profile at URL src.
func (f *fetcher) Fetch(src string, duration, timeout time.Duration) (*profile.Profile, string, error) {
	if next := f.run.opts.Fetch; next != nil {
		p, url, err := next.Fetch(src, duration, timeout)
		if err != nil {
			return nil, "", err
		}
		if p != nil {
			f.run.jit.extend(p, src, nil, "")
			f.run.prefetch(p)
			return p, url, nil
		}
	}
	if _, err := os.Stat(src); err == nil && isPerfFile(src) {
		p, err := f.readPerfData(src)
		if err != nil {
			return nil, "", err
		}
		f.run.prefetch(p)
		return p, "", nil
	}
	data, url, local, err := f.fetchData(src, duration, timeout)
	if err != nil {
		return nil, "", err
	}
	// The JIT objects are read while the profile is decompressed and
	// parsed, and those that hold its anonymous addresses indexed.
	dirs := f.run.jit.find.dirs(local)
	f.run.jit.preload(dirs)
	warmJIT := f.run.jit.warmer(dirs)
	p, memoryMap, err := jprofile.ParseLimitHint(data, f.run.maxDecompressed(), func(h jprofile.Hint) {
		f.run.warmMappings(h.Mappings)
		warmJIT(h.JITAddresses)
	})
	if err != nil {
		return nil, "", err
	}
	f.run.jit.extendDirs(p, src, memoryMap, dirs)
	f.run.prefetch(p)
	return p, url, nil
}

// buildIDDir returns the directory of perf's build-ID cache:
// $PERF_BUILDID_DIR (which perf sets for the scripts it runs, and users
// for pprof), else where perf record and perf report find it: buildid.dir
// in perf's configuration (perf config), else $HOME/.debug. A
// configuration file perf would not read either is reported once.
func (f *fetcher) buildIDDir() string {
	getenv := f.run.opts.Getenv
	if dir := getenv("PERF_BUILDID_DIR"); dir != "" {
		return dir
	}
	dir, err := perfconfig.BuildIDDir(getenv, perfconfig.SystemFile)
	if err != nil {
		f.run.jit.warnOnce(fmt.Sprintf("perf's configuration: %v", err))
	}
	return dir
}

// fetchData reads the profile data of src. A source that names an
// existing file is that file, even if it looks like a URL (go tool
// pprof's rule, for names with a colon). Otherwise it is a URL; a bare
// host:port means its CPU profile handler, /debug/pprof/profile, as
// with go tool pprof. It returns the URL fetched, if any, and the path of
// the local file read, if any.
func (f *fetcher) fetchData(src string, duration, timeout time.Duration) (data []byte, srcURL, local string, err error) {
	_, statErr := os.Stat(src)
	if statErr == nil {
		data, err = os.ReadFile(src)
		return data, "", src, err
	}
	u, timeout := adjustURL(src, duration, timeout)
	if u == "" {
		return nil, "", "", statErr
	}
	ui := f.run.ui
	ui.Print(fetchingNotice(u))
	if duration > 0 {
		ui.Print(waitNotice(duration))
	}
	data, err = fetchURL(u, timeout, f.run.transport)
	return data, u, "", err
}

// cpuProfileHandler is the path a bare host:port source is completed
// with. Upstream pprof leaves the path empty; go tool pprof completes it
// so, and jitpprof replaces both.
const cpuProfileHandler = "/debug/pprof/profile"

// adjustURL turns a source into the URL to fetch and the timeout to use,
// or returns "" if source is not a URL. The -seconds flag (duration)
// becomes the "seconds" query parameter; without it, a "seconds" already
// in the URL sets the duration. The timeout defaults to 1.5 times the
// duration, or 60 seconds.
func adjustURL(source string, duration, timeout time.Duration) (string, time.Duration) {
	u, err := url.Parse(source)
	if err != nil || (u.Host == "" && u.Scheme != "" && u.Scheme != "file") {
		// url.Parse reads "host:port/path" as scheme "host".
		u, err = url.Parse("http://" + source)
	}
	if err != nil || u.Host == "" {
		return "", 0
	}
	if u.Path == "" || u.Path == "/" {
		u.Path = cpuProfileHandler
	}
	values := u.Query()
	if duration > 0 {
		values.Set("seconds", strconv.Itoa(int(duration.Seconds())))
	} else if s := values.Get("seconds"); s != "" {
		if secs, err := strconv.ParseInt(s, 10, 32); err == nil {
			duration = time.Duration(secs) * time.Second
		}
	}
	if timeout <= 0 {
		if duration > 0 {
			timeout = duration + duration/2
		} else {
			timeout = 60 * time.Second
		}
	}
	u.RawQuery = values.Encode()
	return u.String(), timeout
}

// fetchURL gets a profile over HTTP.
func fetchURL(source string, timeout time.Duration, tr http.RoundTripper) ([]byte, error) {
	client := &http.Client{Transport: tr, Timeout: timeout + 5*time.Second}
	resp, err := client.Get(source)
	if err != nil {
		return nil, fmt.Errorf("http fetch: %w", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, statusCodeError(resp)
	}
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, fmt.Errorf("http fetch: reading %s: %w", source, err)
	}
	return data, nil
}

// statusCodeError describes a failed HTTP response, with the body when
// it is an error message from a pprof handler.
func statusCodeError(resp *http.Response) error {
	if resp.Header.Get("X-Go-Pprof") != "" && bytes.Contains([]byte(resp.Header.Get("Content-Type")), []byte("text/plain")) {
		if body, err := io.ReadAll(resp.Body); err == nil {
			return fmt.Errorf("server response: %s - %s", resp.Status, body)
		}
	}
	return fmt.Errorf("server response: %s", resp.Status)
}

// isPerfFile reports whether path holds perf.data (perf record) output,
// of either byte order, or is the directory perf record --threads
// writes, whose header file is data.
func isPerfFile(path string) bool {
	if st, err := os.Stat(path); err == nil && st.IsDir() {
		path = filepath.Join(path, "data")
	}
	f, err := regfile.Open(path)
	if err != nil {
		return false
	}
	defer f.Close()
	head := make([]byte, len(perfdata.Magic))
	_, err = io.ReadFull(f, head)
	return err == nil && (string(head) == perfdata.Magic || string(head) == "2ELIFREP")
}

const limitsUsage = `  Limits (jitpprof):
    -max_profile_mb       The most a gzipped profile may decompress to, in MiB
                          (default 128): a few KiB of gzip can claim GiBs.
    -max_perf_mb          The most the perf.data recordings of the run may
                          decompress to (perf record -z), in MiB (default 4096);
                          the records past it are not read.`

// maxDecompressed returns the -max_profile_mb limit in bytes.
func (r *run) maxDecompressed() int64 {
	if r.maxProfileMB == nil || *r.maxProfileMB <= 0 {
		return jprofile.DefaultMaxDecompressed
	}
	return int64(*r.maxProfileMB) << 20
}
