package browsertest

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"
)

// pollInterval is how often WaitFor evaluates its condition.
const pollInterval = 20 * time.Millisecond

// Page is a browser tab with its own CDP session. Its methods may be
// called from several goroutines; each command is bounded by a timeout
// of 30 seconds.
type Page struct {
	t               testing.TB
	conn            *cdpConn
	target, session string
	ctx             context.Context // Canceled by Close.
	cancel          context.CancelFunc
	wg              sync.WaitGroup // The dialog goroutine.

	mu        sync.Mutex
	onDialog  func(Dialog) (accept bool, promptText string)
	closeOnce sync.Once
}

// Dialog is a JavaScript dialog the page opened (Page.javascriptDialogOpening).
type Dialog struct {
	Type          string `json:"type"` // "alert", "confirm", "prompt" or "beforeunload".
	Message       string `json:"message"`
	DefaultPrompt string `json:"defaultPrompt"`
}

// NewPage opens a new blank tab; t.Cleanup closes it. The test fails if
// the browser cannot open one.
func (b *Browser) NewPage(t testing.TB) *Page {
	t.Helper()
	p, err := b.newPage(t)
	if err != nil {
		t.Fatalf("opening a page: %v\nbrowser output:\n%s", err, b.Output())
	}
	t.Cleanup(p.Close)
	return p
}

func (b *Browser) newPage(t testing.TB) (*Page, error) {
	ctx, cancel := context.WithTimeout(context.Background(), callTimeout)
	defer cancel()
	var target struct {
		TargetID string `json:"targetId"`
	}
	if err := b.conn.call(ctx, "", "Target.createTarget", map[string]any{"url": "about:blank"}, &target); err != nil {
		return nil, err
	}
	var attached struct {
		SessionID string `json:"sessionId"`
	}
	if err := b.conn.call(ctx, "", "Target.attachToTarget", map[string]any{"targetId": target.TargetID, "flatten": true}, &attached); err != nil {
		return nil, err
	}
	p := &Page{t: t, conn: b.conn, target: target.TargetID, session: attached.SessionID}
	p.ctx, p.cancel = context.WithCancel(context.Background())
	for _, m := range []string{"Page.enable", "Runtime.enable"} {
		if err := p.call(m, nil, nil); err != nil {
			p.Close()
			return nil, err
		}
	}
	if err := p.call("Page.setLifecycleEventsEnabled", map[string]any{"enabled": true}, nil); err != nil {
		p.Close()
		return nil, err
	}
	return p, nil
}

// call sends a command in the page's session.
func (p *Page) call(method string, params, result any) error {
	ctx, cancel := context.WithTimeout(p.ctx, callTimeout)
	defer cancel()
	return p.conn.call(ctx, p.session, method, params, result)
}

// Navigate loads url and waits for its load event.
func (p *Page) Navigate(url string) error {
	ctx, cancel := context.WithTimeout(p.ctx, callTimeout)
	defer cancel()
	events := p.conn.subscribe(p.session, "Page.lifecycleEvent")
	defer events.cancel()
	var res struct {
		LoaderID  string `json:"loaderId"`
		ErrorText string `json:"errorText"`
	}
	if err := p.conn.call(ctx, p.session, "Page.navigate", map[string]any{"url": url}, &res); err != nil {
		return err
	}
	if res.ErrorText != "" {
		return fmt.Errorf("navigating to %s: %s", url, res.ErrorText)
	}
	if res.LoaderID == "" {
		return nil // Same-document navigation: there is no load event.
	}
	for {
		raw, err := events.next(ctx)
		if err != nil {
			return fmt.Errorf("navigating to %s: %w", url, err)
		}
		var ev struct {
			LoaderID string `json:"loaderId"`
			Name     string `json:"name"`
		}
		if err := json.Unmarshal(raw, &ev); err != nil {
			return fmt.Errorf("decoding Page.lifecycleEvent: %w", err)
		}
		if ev.Name == "load" && ev.LoaderID == res.LoaderID {
			return nil
		}
	}
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
	var res struct {
		Result struct {
			Type                string          `json:"type"`
			Value               json.RawMessage `json:"value"`
			UnserializableValue string          `json:"unserializableValue"`
		} `json:"result"`
		ExceptionDetails *struct {
			Text      string `json:"text"`
			Exception *struct {
				Description string `json:"description"`
			} `json:"exception"`
		} `json:"exceptionDetails"`
	}
	params := map[string]any{"expression": js, "returnByValue": true, "awaitPromise": true, "userGesture": true}
	if err := p.conn.call(ctx, p.session, "Runtime.evaluate", params, &res); err != nil {
		return nil, err
	}
	if e := res.ExceptionDetails; e != nil {
		msg := e.Text
		if e.Exception != nil && e.Exception.Description != "" {
			msg = e.Exception.Description
		}
		return nil, fmt.Errorf("evaluating %s: %s", js, msg)
	}
	switch r := res.Result; {
	case r.UnserializableValue != "":
		return json.Marshal(r.UnserializableValue)
	case r.Type == "undefined":
		return nil, nil
	default:
		return r.Value, nil
	}
}

// EvalAs evaluates js in p like Eval and decodes its value into a T.
// An undefined value is an error.
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
// release) that the page handles as a user's click.
func (p *Page) Click(x, y float64) error {
	for _, ev := range []map[string]any{
		{"type": "mouseMoved", "x": x, "y": y},
		{"type": "mousePressed", "x": x, "y": y, "button": "left", "buttons": 1, "clickCount": 1},
		{"type": "mouseReleased", "x": x, "y": y, "button": "left", "buttons": 0, "clickCount": 1},
	} {
		if err := p.call("Input.dispatchMouseEvent", ev, nil); err != nil {
			return err
		}
	}
	return nil
}

// Hover moves the mouse to (x, y), in CSS pixels from the top left of
// the viewport, with a real input event.
func (p *Page) Hover(x, y float64) error {
	return p.call("Input.dispatchMouseEvent", map[string]any{"type": "mouseMoved", "x": x, "y": y}, nil)
}

// Screenshot returns a PNG image of the viewport.
func (p *Page) Screenshot() ([]byte, error) {
	var res struct {
		Data string `json:"data"`
	}
	if err := p.call("Page.captureScreenshot", map[string]any{"format": "png"}, &res); err != nil {
		return nil, err
	}
	png, err := base64.StdEncoding.DecodeString(res.Data)
	if err != nil {
		return nil, fmt.Errorf("decoding the screenshot: %w", err)
	}
	return png, nil
}

// SetViewport sets the viewport to w×h CSS pixels, one device pixel
// each, so that screenshots are w×h.
func (p *Page) SetViewport(w, h int) error {
	return p.call("Emulation.setDeviceMetricsOverride", map[string]any{
		"width": w, "height": h, "deviceScaleFactor": 1, "mobile": false,
	}, nil)
}

// OnDialog makes h answer the JavaScript dialogs (alert, confirm,
// prompt) the page opens from now on: accept or dismiss, and the text
// typed into a prompt. Without a handler a dialog blocks the page, and
// the command that opened it, until it times out. A later call replaces
// the handler. A failure to answer fails the test.
func (p *Page) OnDialog(h func(Dialog) (accept bool, promptText string)) {
	p.mu.Lock()
	first := p.onDialog == nil
	p.onDialog = h
	p.mu.Unlock()
	if !first {
		return
	}
	events := p.conn.subscribe(p.session, "Page.javascriptDialogOpening")
	p.wg.Go(func() {
		defer events.cancel()
		for {
			raw, err := events.next(p.ctx)
			if err != nil {
				return // The page was closed or the browser has gone.
			}
			var d Dialog
			if err := json.Unmarshal(raw, &d); err != nil {
				p.t.Errorf("decoding Page.javascriptDialogOpening: %v", err)
				continue
			}
			p.mu.Lock()
			h := p.onDialog
			p.mu.Unlock()
			accept, text := h(d)
			err = p.call("Page.handleJavaScriptDialog", map[string]any{"accept": accept, "promptText": text}, nil)
			if err != nil && p.ctx.Err() == nil {
				p.t.Errorf("answering the %s dialog %q: %v", d.Type, d.Message, err)
			}
		}
	})
}

// Close closes the tab and stops the page's goroutines. Later calls do
// nothing; NewPage arranges for Close to run at the end of the test.
func (p *Page) Close() {
	p.closeOnce.Do(func() {
		p.cancel()
		p.wg.Wait()
		ctx, cancel := context.WithTimeout(context.Background(), closeTimeout)
		defer cancel()
		// If the browser has gone, so has the tab: the error says nothing.
		p.conn.call(ctx, "", "Target.closeTarget", map[string]any{"targetId": p.target}, nil)
	})
}
