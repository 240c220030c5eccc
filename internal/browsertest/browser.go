// Package browsertest drives a headless Chromium from Go tests, through
// github.com/chromedp/chromedp: it starts the browser and offers what
// tests of web output need: navigate, evaluate JavaScript, wait for a
// condition, click and hover with real mouse events, answer dialogs, set
// the viewport and take PNG screenshots.
//
//	b := browsertest.Start(t) // Skips (fails under CI=true) without chromium.
//	p := b.NewPage(t)
//	if err := p.Navigate(srv.URL); err != nil {
//		t.Fatal(err)
//	}
//	title, err := browsertest.EvalAs[string](p, "document.title")
//
// Every command and wait is bounded by a timeout, and everything started
// is stopped by t.Cleanup: pages are closed and the browser is stopped.
package browsertest

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/input"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
	"github.com/jitpprof/pprof/internal/testenv"
)

// Timeouts.
const (
	// startTimeout bounds the browser's start.
	startTimeout = 30 * time.Second
	// callTimeout bounds each command, and Navigate's wait for the load
	// event.
	callTimeout = 30 * time.Second
	// pollInterval is how often WaitFor evaluates its condition.
	pollInterval = 20 * time.Millisecond
)

// A Browser is a headless Chromium started for a test.
type Browser struct {
	ctx         context.Context // the browser's
	cancel      context.CancelFunc
	cancelAlloc context.CancelFunc
	out         *output
	profileDir  string
	closeOnce   sync.Once
}

// Start starts headless Chromium (the chromium on PATH), skipping the
// test (failing it under CI=true) if there is none. t.Cleanup stops it.
func Start(t testing.TB) *Browser {
	t.Helper()
	path := testenv.Tool(t, "chromium", "chromium")
	out := &output{}
	// Not t.TempDir: the browser's helpers may still write to their
	// profile for a moment after the browser exits; Close removes it,
	// retrying.
	profileDir, err := os.MkdirTemp("", "browsertest-")
	if err != nil {
		t.Fatal(err)
	}
	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(path),
		chromedp.Headless, chromedp.NoSandbox, chromedp.DisableGPU,
		chromedp.NoFirstRun, chromedp.NoDefaultBrowserCheck,
		chromedp.UserDataDir(profileDir),
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("hide-scrollbars", true),
		chromedp.Flag("mute-audio", true),
		chromedp.CombinedOutput(out),
	}
	allocCtx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancel := chromedp.NewContext(allocCtx)
	b := &Browser{ctx: ctx, cancel: cancel, cancelAlloc: cancelAlloc, out: out, profileDir: profileDir}
	// The first Run starts the browser, and ties it to ctx itself (not
	// to a context with a timeout, whose end would stop the browser).
	started := make(chan error, 1)
	go func() { started <- chromedp.Run(ctx) }()
	select {
	case err := <-started:
		if err != nil {
			b.Close()
			t.Fatalf("starting %s: %v\n%s", path, err, out.String())
		}
	case <-time.After(startTimeout):
		b.Close()
		t.Fatalf("starting %s: not ready within %v\n%s", path, startTimeout, out.String())
	}
	t.Cleanup(b.Close)
	return b
}

// pid returns the browser's process id, or 0.
func (b *Browser) pid() int {
	if c := chromedp.FromContext(b.ctx); c != nil && c.Browser != nil {
		if p := c.Browser.Process(); p != nil {
			return p.Pid
		}
	}
	return 0
}

// Output returns what the browser has written to its standard output
// and error so far (the last 64 KiB), for diagnosing a failing test.
func (b *Browser) Output() string { return b.out.String() }

// Close stops the browser and waits for it. Later calls do nothing.
func (b *Browser) Close() {
	b.closeOnce.Do(func() {
		b.cancel()
		b.cancelAlloc()
		for range 100 {
			if os.RemoveAll(b.profileDir) == nil {
				return
			}
			time.Sleep(20 * time.Millisecond)
		}
	})
}

// A Page is a browser tab.
type Page struct {
	t         testing.TB
	ctx       context.Context
	cancel    context.CancelFunc
	mu        sync.Mutex
	onDialog  func(Dialog) (bool, string)
	listening bool
	closeOnce sync.Once
}

// NewPage opens a tab; t.Cleanup closes it.
func (b *Browser) NewPage(t testing.TB) *Page {
	t.Helper()
	ctx, cancel := chromedp.NewContext(b.ctx)
	if err := chromedp.Run(ctx); err != nil {
		cancel()
		t.Fatalf("opening a tab: %v\n%s", err, b.Output())
	}
	p := &Page{t: t, ctx: ctx, cancel: cancel}
	t.Cleanup(p.Close)
	return p
}

// run runs actions in the tab within callTimeout.
func (p *Page) run(actions ...chromedp.Action) error {
	ctx, cancel := context.WithTimeout(p.ctx, callTimeout)
	defer cancel()
	return chromedp.Run(ctx, actions...)
}

// Navigate loads url and waits for its load event.
func (p *Page) Navigate(url string) error {
	if err := p.run(chromedp.Navigate(url)); err != nil {
		return fmt.Errorf("navigating to %s: %w", url, err)
	}
	return nil
}

// Eval evaluates the JavaScript expression js in the page, awaiting it
// if it is a promise, and returns its value as JSON: nil for undefined,
// a JSON string for values JSON cannot represent (NaN, Infinity, -0,
// bigints), {} for objects such as DOM nodes. An exception is an error
// carrying its message.
func (p *Page) Eval(js string) (json.RawMessage, error) {
	ctx, cancel := context.WithTimeout(p.ctx, callTimeout)
	defer cancel()
	return p.eval(ctx, js)
}

func (p *Page) eval(ctx context.Context, js string) (json.RawMessage, error) {
	var out json.RawMessage
	err := chromedp.Run(ctx, chromedp.ActionFunc(func(ctx context.Context) error {
		obj, exc, err := runtime.Evaluate(js).WithReturnByValue(true).WithAwaitPromise(true).Do(ctx)
		switch {
		case err != nil:
			return err
		case exc != nil:
			msg := exc.Text
			if exc.Exception != nil && exc.Exception.Description != "" {
				msg = exc.Exception.Description
			}
			return fmt.Errorf("evaluating %s: %s", js, msg)
		case obj.Type == runtime.TypeUndefined:
			out = nil
		case obj.UnserializableValue != "":
			out = json.RawMessage(strconv.Quote(string(obj.UnserializableValue)))
		case len(obj.Value) == 0:
			out = json.RawMessage("{}")
		default:
			out = json.RawMessage(bytes.Clone(obj.Value))
		}
		return nil
	}))
	return out, err
}

// EvalAs evaluates js, as Eval does, and decodes its value into a T.
func EvalAs[T any](p *Page, js string) (T, error) {
	var v T
	raw, err := p.Eval(js)
	if err != nil {
		return v, err
	}
	if raw == nil {
		return v, fmt.Errorf("evaluating %s: got undefined, want a %T", js, v)
	}
	if err := json.Unmarshal(raw, &v); err != nil {
		return v, fmt.Errorf("evaluating %s: decoding %s: %w", js, raw, err)
	}
	return v, nil
}

// WaitFor evaluates the JavaScript expression cond until it is truthy,
// or fails after timeout with the last exception, if any.
func (p *Page) WaitFor(cond string, timeout time.Duration) error {
	ctx, cancel := context.WithTimeout(p.ctx, timeout)
	defer cancel()
	js := "!!(" + cond + ")"
	for {
		raw, err := p.eval(ctx, js)
		if err == nil && string(raw) == "true" {
			return nil
		}
		select {
		case <-time.After(pollInterval):
		case <-ctx.Done():
			if err != nil && !errors.Is(err, context.DeadlineExceeded) {
				return fmt.Errorf("waiting %v for %s: %w", timeout, cond, err)
			}
			return fmt.Errorf("waiting %v for %s: %w", timeout, cond, context.Cause(ctx))
		}
	}
}

// Click clicks the left mouse button at (x, y), in CSS pixels from the
// top left of the viewport, with real input events (move, press,
// release) that the page handles as a user's click. A dialog the click
// opens is answered by the OnDialog handler.
func (p *Page) Click(x, y float64) error {
	return p.run(
		chromedp.MouseEvent(input.MouseMoved, x, y),
		chromedp.ActionFunc(func(ctx context.Context) error {
			// Not chromedp.MouseClickXY, which waits for the release to
			// be handled: a click that opens a dialog would wait for the
			// dialog to be answered.
			for _, typ := range []input.MouseType{input.MousePressed, input.MouseReleased} {
				if err := input.DispatchMouseEvent(typ, x, y).WithButton(input.Left).WithClickCount(1).Do(ctx); err != nil {
					return err
				}
			}
			return nil
		}))
}

// Hover moves the mouse to (x, y), in CSS pixels from the top left of
// the viewport, with a real input event.
func (p *Page) Hover(x, y float64) error {
	return p.run(chromedp.MouseEvent(input.MouseMoved, x, y))
}

// Screenshot returns a PNG image of the viewport.
func (p *Page) Screenshot() ([]byte, error) {
	var png []byte
	err := p.run(chromedp.ActionFunc(func(ctx context.Context) error {
		var err error
		png, err = page.CaptureScreenshot().WithFormat(page.CaptureScreenshotFormatPng).Do(ctx)
		return err
	}))
	return png, err
}

// SetViewport sets the viewport to w×h CSS pixels, one device pixel
// each, so that screenshots are w×h.
func (p *Page) SetViewport(w, h int) error {
	return p.run(chromedp.EmulateViewport(int64(w), int64(h), chromedp.EmulateScale(1)))
}

// A Dialog is a JavaScript dialog the page opened.
type Dialog struct {
	Type          string // alert, confirm, prompt or beforeunload
	Message       string
	DefaultPrompt string
}

// OnDialog makes h answer the JavaScript dialogs (alert, confirm,
// prompt) the page opens from now on: accept or dismiss, and the text
// typed into a prompt. A later call replaces the handler. A failure to
// answer fails the test.
func (p *Page) OnDialog(h func(Dialog) (accept bool, promptText string)) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.onDialog = h
	if p.listening {
		return
	}
	p.listening = true
	chromedp.ListenTarget(p.ctx, func(ev any) {
		e, ok := ev.(*page.EventJavascriptDialogOpening)
		if !ok {
			return
		}
		p.mu.Lock()
		h := p.onDialog
		p.mu.Unlock()
		d := Dialog{Type: string(e.Type), Message: e.Message, DefaultPrompt: e.DefaultPrompt}
		go func() { // not on the event loop: the answer is a command
			accept, text := h(d)
			err := p.run(page.HandleJavaScriptDialog(accept).WithPromptText(text))
			if err != nil && p.ctx.Err() == nil {
				p.t.Errorf("answering the %s dialog %q: %v", d.Type, d.Message, err)
			}
		}()
	})
}

// Close closes the tab. Later calls do nothing; NewPage arranges for
// Close to run at the end of the test.
func (p *Page) Close() { p.closeOnce.Do(p.cancel) }

// output keeps the last 64 KiB the browser wrote.
type output struct {
	mu  sync.Mutex
	buf []byte
}

func (o *output) Write(b []byte) (int, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.buf = append(o.buf, b...)
	if n := len(o.buf) - 64<<10; n > 0 {
		o.buf = append(o.buf[:0], o.buf[n:]...)
	}
	return len(b), nil
}

func (o *output) String() string {
	o.mu.Lock()
	defer o.mu.Unlock()
	return string(o.buf)
}
