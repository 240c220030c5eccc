// Package browsertest drives a headless Chromium from Go tests through
// the Chrome DevTools Protocol (CDP), with nothing but the standard
// library: it starts the browser, speaks the protocol over its own small
// websocket client (RFC 6455) and offers what tests of web output need:
// navigate, evaluate JavaScript, wait for a condition, click with real
// mouse events, set the viewport and take PNG screenshots.
//
//	b := browsertest.Start(t) // Skips (fails under CI=true) without chromium.
//	p := b.NewPage(t)
//	if err := p.Navigate(srv.URL); err != nil {
//		t.Fatal(err)
//	}
//	title, err := browsertest.EvalAs[string](p, "document.title")
//
// Every command and wait is bounded by a timeout, and everything started
// is stopped by t.Cleanup: pages are closed, the browser and its helper
// processes are killed, no goroutine is left behind.
package browsertest

import (
	"bytes"
	"context"
	"fmt"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jitpprof/pprof/internal/testenv"
)

// Timeouts.
const (
	// startTimeout bounds the browser's start, up to a connected CDP
	// session.
	startTimeout = 30 * time.Second
	// callTimeout bounds each CDP command, and Navigate's wait for the
	// load event.
	callTimeout = 30 * time.Second
	// closeTimeout bounds each step of shutting down.
	closeTimeout = 5 * time.Second
)

// browserArgs returns the command line of the browser after its name:
// headless, no sandbox (tests may run as root), nothing that talks to
// the network on its own, profile directory dir, and a DevTools port
// chosen by the browser.
func browserArgs(dir string) []string {
	return []string{
		"--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
		"--no-first-run", "--disable-background-networking",
		"--disable-component-update", "--disable-sync",
		"--hide-scrollbars", "--mute-audio",
		"--user-data-dir=" + dir, "--remote-debugging-port=0", "about:blank",
	}
}

// Browser is a running headless Chromium with a CDP connection to it.
type Browser struct {
	cmd     *exec.Cmd
	out     *outputWriter
	conn    *cdpConn
	waited  chan struct{} // Closed when cmd.Wait has returned.
	waitErr error         // What cmd.Wait returned; read after waited.

	closeOnce sync.Once
}

// Start starts chromium (found on PATH) with a fresh profile directory
// and returns it, connected. Without chromium the test is skipped, or
// fails when the environment variable CI is "true"; if the browser
// does not start, the test fails with its output. t.Cleanup closes the
// browser.
func Start(t testing.TB) *Browser {
	t.Helper()
	path := testenv.Tool(t, "chromium", "chromium")
	b, err := start(path, t.TempDir())
	if err != nil {
		t.Fatalf("starting %s: %v", path, err)
	}
	t.Cleanup(b.Close)
	return b
}

// start starts the browser at path with profile directory dir.
func start(path, dir string) (*Browser, error) {
	cmd := exec.Command(path, browserArgs(dir)...)
	out := &outputWriter{url: make(chan string, 1)}
	cmd.Stdout, cmd.Stderr = out, out
	cmd.WaitDelay = closeTimeout
	isolate(cmd)
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	b := &Browser{cmd: cmd, out: out, waited: make(chan struct{})}
	go func() {
		b.waitErr = cmd.Wait()
		close(b.waited)
	}()

	ctx, cancel := context.WithTimeout(context.Background(), startTimeout)
	defer cancel()
	var url string
	select {
	case url = <-out.url:
	case <-b.waited:
		b.kill() // Its helpers may live on.
		return nil, fmt.Errorf("browser exited (%v) before listening; its output:\n%s", b.waitErr, out.String())
	case <-ctx.Done():
		b.kill()
		return nil, fmt.Errorf("no DevTools URL within %v; the browser's output:\n%s", startTimeout, out.String())
	}
	conn, err := dialCDP(ctx, url)
	if err != nil {
		b.kill()
		return nil, fmt.Errorf("connecting to %s: %w", url, err)
	}
	b.conn = conn
	return b, nil
}

// Output returns what the browser has written to its standard output
// and error so far (the last 64 KiB), for diagnosing a failing test.
func (b *Browser) Output() string { return b.out.String() }

// Close closes the CDP connection and stops the browser, politely
// (Browser.close) and then by killing its process group; it waits until
// the browser has exited. Later calls do nothing. Start arranges for
// Close to run at the end of the test.
func (b *Browser) Close() {
	b.closeOnce.Do(func() {
		ctx, cancel := context.WithTimeout(context.Background(), closeTimeout)
		// The browser may exit before answering: the error says nothing.
		b.conn.call(ctx, "", "Browser.close", nil, nil)
		cancel()
		b.conn.close(closeTimeout)
		select {
		case <-b.waited:
		case <-time.After(closeTimeout):
		}
		b.kill()
	})
}

// kill kills whatever is left of the browser's processes and waits for
// the browser to be reaped.
func (b *Browser) kill() {
	killGroup(b.cmd) // Only fails if there is nothing left to kill.
	<-b.waited
}

// outputWriter collects the browser's output, keeping its tail, and
// sends the DevTools websocket URL on url once it has been printed.
type outputWriter struct {
	url chan string // Capacity 1, sent to once.

	mu      sync.Mutex
	buf     []byte // The tail of the output.
	partial []byte // The current line, until its newline.
	sent    bool
}

// maxOutput is how much of the browser's output outputWriter keeps.
const maxOutput = 64 << 10

const devToolsPrefix = "DevTools listening on "

func (w *outputWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.buf = append(w.buf, p...)
	if len(w.buf) > maxOutput {
		w.buf = append(w.buf[:0], w.buf[len(w.buf)-maxOutput:]...)
	}
	if w.sent {
		return len(p), nil
	}
	w.partial = append(w.partial, p...)
	for {
		i := bytes.IndexByte(w.partial, '\n')
		if i < 0 {
			break
		}
		line := strings.TrimSpace(string(w.partial[:i]))
		w.partial = w.partial[i+1:]
		if url, ok := strings.CutPrefix(line, devToolsPrefix); ok {
			w.url <- url
			w.sent, w.partial = true, nil
			break
		}
	}
	return len(p), nil
}

// String returns the tail of the output.
func (w *outputWriter) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return string(w.buf)
}
