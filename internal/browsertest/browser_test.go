package browsertest

import (
	"bytes"
	"fmt"
	"image/color"
	"image/png"
	"net/http"
	"net/http/httptest"
	"runtime/pprof"
	"strings"
	"syscall"
	"testing"
	"time"
)

const testPage = `<!doctype html>
<html><head><title>start</title><style>
body { margin: 0; background: #fff; }
#press { position: absolute; left: 50px; top: 40px; width: 120px; height: 40px; }
#ask { position: absolute; left: 250px; top: 40px; width: 100px; height: 40px; }
#band { position: absolute; left: 0; top: 200px; width: 100%; height: 50px; background: rgb(10, 200, 30); }
</style></head><body>
<button id="press" onmouseover="window.hovered = true" onclick="document.title = 'clicked at ' + event.clientX + ',' + event.clientY + ' trusted=' + event.isTrusted">press</button>
<button id="ask" onclick="document.title = 'answer: ' + prompt('name?', 'default')">ask</button>
<div id="band"></div>
</body></html>`

// TestChromium drives a real headless Chromium through every method.
func TestChromium(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprint(w, testPage)
	}))
	defer srv.Close()

	b := Start(t)
	p := b.NewPage(t)
	t.Log("started")
	if err := p.SetViewport(400, 300); err != nil {
		t.Fatal(err)
	}
	if err := p.Navigate(srv.URL); err != nil {
		t.Fatal(err)
	}

	if got, err := EvalAs[string](p, "document.title"); err != nil || got != "start" {
		t.Errorf("got title %q (%v), want start", got, err)
	}
	if got, err := EvalAs[int](p, "new Promise(r => setTimeout(() => r(6 * 7), 10))"); err != nil || got != 42 {
		t.Errorf("got awaited %d (%v), want 42", got, err)
	}
	if got, err := p.Eval("undefined"); err != nil || got != nil {
		t.Errorf("got undefined as %s (%v), want nil", got, err)
	}
	if got, err := p.Eval("0/0"); err != nil || string(got) != `"NaN"` {
		t.Errorf("got NaN as %s (%v), want \"NaN\"", got, err)
	}
	if _, err := p.Eval("throw new Error('boom')"); err == nil || !strings.Contains(err.Error(), "boom") {
		t.Errorf("got error %v, want one saying boom", err)
	}

	// A real hover, then a real click, at the centre of the button.
	type rect struct{ X, Y, W, H float64 }
	r, err := EvalAs[rect](p, `(() => { const r = document.getElementById('press').getBoundingClientRect(); return {X: r.x, Y: r.y, W: r.width, H: r.height}; })()`)
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Hover(r.X+r.W/2, r.Y+r.H/2); err != nil {
		t.Fatal(err)
	}
	if got, err := EvalAs[bool](p, "window.hovered === true"); err != nil || !got {
		t.Errorf("got hovered %v (%v), want true", got, err)
	}
	if err := p.Click(r.X+r.W/2, r.Y+r.H/2); err != nil {
		t.Fatal(err)
	}
	if err := p.WaitFor(`document.title === 'clicked at 110,60 trusted=true'`, 5*time.Second); err != nil {
		title, _ := EvalAs[string](p, "document.title")
		t.Errorf("%v (title %q)", err, title)
	}

	// A prompt, answered by the dialog handler while Click waits.
	dialogs := make(chan Dialog, 1)
	p.OnDialog(func(d Dialog) (bool, string) {
		dialogs <- d
		return true, "jit"
	})
	if err := p.Click(300, 60); err != nil {
		t.Fatal(err)
	}
	if err := p.WaitFor(`document.title === 'answer: jit'`, 5*time.Second); err != nil {
		t.Error(err)
	}
	select {
	case d := <-dialogs:
		if want := (Dialog{Type: "prompt", Message: "name?", DefaultPrompt: "default"}); d != want {
			t.Errorf("got dialog %+v, want %+v", d, want)
		}
	default:
		t.Error("got no dialog, want the prompt")
	}

	data, err := p.Screenshot()
	if err != nil {
		t.Fatal(err)
	}
	img, err := png.Decode(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	if got := img.Bounds().Size(); got.X != 400 || got.Y != 300 {
		t.Errorf("got a %v screenshot, want 400x300", got)
	}
	for _, px := range []struct {
		x, y int
		want color.NRGBA
	}{
		{x: 5, y: 5, want: color.NRGBA{255, 255, 255, 255}},
		{x: 0, y: 201, want: color.NRGBA{10, 200, 30, 255}},
		{x: 399, y: 248, want: color.NRGBA{10, 200, 30, 255}},
		{x: 200, y: 260, want: color.NRGBA{255, 255, 255, 255}},
	} {
		if got := color.NRGBAModel.Convert(img.At(px.x, px.y)); got != px.want {
			t.Errorf("pixel (%d, %d): got %v, want %v", px.x, px.y, got, px.want)
		}
	}

	if err := p.WaitFor("false", 100*time.Millisecond); err == nil {
		t.Error("got WaitFor(false) to succeed, want a timeout")
	}
	if err := p.WaitFor("nosuchvariable", 100*time.Millisecond); err == nil || !strings.Contains(err.Error(), "nosuchvariable") {
		t.Errorf("got %v, want a timeout with the ReferenceError", err)
	}
	closed := httptest.NewServer(http.NotFoundHandler())
	closed.Close()
	if err := p.Navigate(closed.URL); err == nil || !strings.Contains(err.Error(), "ERR_CONNECTION_REFUSED") {
		t.Errorf("got %v, want ERR_CONNECTION_REFUSED", err)
	}

	// Closing leaves neither goroutines nor the browser behind.
	pid := b.pid()
	p.Close()
	b.Close()
	if leaked := leakedGoroutines(t); leaked != "" {
		t.Errorf("got goroutines left after Close:\n%s", leaked)
	}
	if pid <= 0 || syscall.Kill(pid, 0) == nil {
		t.Errorf("got the browser (pid %d) still running after Close", pid)
	}
	if _, err := p.Eval("1"); err == nil {
		t.Error("got Eval to work on a closed page, want an error")
	}
}

// leakedGoroutines returns the stacks of goroutines running this
// package's code or os/exec's, other than the test's own, waiting a
// little for them to end.
func leakedGoroutines(t *testing.T) string {
	t.Helper()
	var leaked []string
	for range 100 {
		var buf bytes.Buffer
		pprof.Lookup("goroutine").WriteTo(&buf, 2)
		leaked = leaked[:0]
		for g := range strings.SplitSeq(buf.String(), "\n\n") {
			if strings.Contains(g, "browsertest.Test") {
				continue
			}
			if strings.Contains(g, "internal/browsertest.") || strings.Contains(g, "os/exec.") || strings.Contains(g, "chromedp.") {
				leaked = append(leaked, g)
			}
		}
		if len(leaked) == 0 {
			return ""
		}
		time.Sleep(20 * time.Millisecond)
	}
	return strings.Join(leaked, "\n\n")
}
