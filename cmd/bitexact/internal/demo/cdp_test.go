package demo

// A minimal Chrome DevTools Protocol client over --remote-debugging-pipe:
// Chromium reads NUL-terminated JSON commands on file descriptor 3 and
// writes responses and events on descriptor 4. No port, no websocket and
// no dependency beyond the standard library.

import (
	"bufio"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"
)

// findChromium returns the browser to drive: $BITEXACT_CHROMIUM, else the
// first of the usual names on PATH.
func findChromium() (string, bool) {
	if p := os.Getenv("BITEXACT_CHROMIUM"); p != "" {
		return p, true
	}
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome", "google-chrome-stable"} {
		if p, err := exec.LookPath(name); err == nil {
			return p, true
		}
	}
	return "", false
}

type browser struct {
	cmd     *exec.Cmd
	w       *os.File
	mu      sync.Mutex
	nextID  int
	pending map[int]chan cdpReply
	session string
	stderr  strings.Builder
	readErr chan error
	console []string
}

type cdpReply struct {
	Result json.RawMessage `json:"result"`
	Error  *struct {
		Message string `json:"message"`
	} `json:"error"`
}

// startBrowser launches headless Chromium with the flags this machine needs
// (no sandbox as root, no background connections to Google's hosts) and a
// fresh profile, and attaches to one new page.
func startBrowser(t *testing.T, path string) *browser {
	t.Helper()
	toChrome, ourEnd, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	fromChrome, chromeEnd, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	b := &browser{w: ourEnd, pending: map[int]chan cdpReply{}, readErr: make(chan error, 1)}
	b.cmd = exec.Command(path,
		"--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
		"--disable-background-networking", "--disable-component-update", "--disable-sync",
		"--disable-default-apps", "--disable-extensions", "--mute-audio", "--hide-scrollbars",
		"--user-data-dir="+t.TempDir(), "--remote-debugging-pipe", "about:blank")
	b.cmd.ExtraFiles = []*os.File{toChrome, chromeEnd} // fds 3 and 4
	b.cmd.Stderr = &limitedWriter{b: &b.stderr, max: 1 << 16}
	if err := b.cmd.Start(); err != nil {
		t.Fatalf("starting %s: %v", path, err)
	}
	toChrome.Close()
	chromeEnd.Close()
	t.Cleanup(func() {
		b.try("", "Browser.close", nil, nil)
		b.w.Close()
		done := make(chan struct{})
		go func() { b.cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(5 * time.Second):
			b.cmd.Process.Kill()
			<-done
		}
	})
	go b.read(fromChrome)

	var target struct{ TargetID string }
	b.call(t, "", "Target.createTarget", map[string]any{"url": "about:blank"}, &target)
	var att struct{ SessionID string }
	b.call(t, "", "Target.attachToTarget", map[string]any{"targetId": target.TargetID, "flatten": true}, &att)
	b.session = att.SessionID
	b.call(t, b.session, "Runtime.enable", nil, nil)
	b.call(t, b.session, "Page.enable", nil, nil)
	b.call(t, b.session, "Log.enable", nil, nil) // CSP violations, failed loads
	return b
}

type limitedWriter struct {
	mu  sync.Mutex
	b   *strings.Builder
	max int
}

func (w *limitedWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if room := w.max - w.b.Len(); room > 0 {
		w.b.Write(p[:min(room, len(p))])
	}
	return len(p), nil
}

func (b *browser) read(f *os.File) {
	r := bufio.NewReader(f)
	for {
		msg, err := r.ReadBytes(0)
		if err != nil {
			b.readErr <- err
			b.mu.Lock()
			for id, ch := range b.pending {
				close(ch)
				delete(b.pending, id)
			}
			b.mu.Unlock()
			return
		}
		var m struct {
			ID     int             `json:"id"`
			Method string          `json:"method"`
			Params json.RawMessage `json:"params"`
			cdpReply
		}
		if json.Unmarshal(msg[:len(msg)-1], &m) != nil {
			continue
		}
		if m.Method == "Runtime.consoleAPICalled" || m.Method == "Runtime.exceptionThrown" || m.Method == "Log.entryAdded" {
			b.mu.Lock()
			b.console = append(b.console, m.Method+": "+string(m.Params))
			b.mu.Unlock()
		}
		if m.ID == 0 {
			continue
		}
		b.mu.Lock()
		ch := b.pending[m.ID]
		delete(b.pending, m.ID)
		b.mu.Unlock()
		if ch != nil {
			ch <- m.cdpReply
		}
	}
}

// call sends one command and decodes its result into out (when non-nil).
func (b *browser) call(t *testing.T, session, method string, params any, out any) {
	t.Helper()
	if err := b.try(session, method, params, out); err != nil {
		t.Fatalf("%s: %v\nchromium stderr (head):\n%s", method, err, b.stderrHead())
	}
}

func (b *browser) try(session, method string, params any, out any) error {
	b.mu.Lock()
	b.nextID++
	id := b.nextID
	ch := make(chan cdpReply, 1)
	b.pending[id] = ch
	b.mu.Unlock()
	msg := map[string]any{"id": id, "method": method}
	if params != nil {
		msg["params"] = params
	}
	if session != "" {
		msg["sessionId"] = session
	}
	data, _ := json.Marshal(msg)
	if _, err := b.w.Write(append(data, 0)); err != nil {
		return err
	}
	select {
	case r, ok := <-ch:
		if !ok {
			return errors.New("chromium closed the pipe")
		}
		if r.Error != nil {
			return errors.New(r.Error.Message)
		}
		if out != nil {
			return json.Unmarshal(r.Result, out)
		}
		return nil
	case <-time.After(60 * time.Second):
		return errors.New("no reply in 60s")
	}
}

func (b *browser) stderrHead() string {
	s := b.stderr.String()
	return s[:min(len(s), 4000)]
}

// eval evaluates a JavaScript expression in the page (awaiting a promise)
// and decodes its JSON value into out.
func (b *browser) eval(t *testing.T, expr string, out any) {
	t.Helper()
	if err := b.tryEval(expr, out); err != nil {
		t.Fatalf("%v\nchromium stderr (head):\n%s", err, b.stderrHead())
	}
}

func (b *browser) tryEval(expr string, out any) error {
	var r struct {
		Result struct {
			Value json.RawMessage `json:"value"`
		} `json:"result"`
		ExceptionDetails *struct {
			Text      string `json:"text"`
			Exception struct {
				Description string `json:"description"`
			} `json:"exception"`
		} `json:"exceptionDetails"`
	}
	if err := b.try(b.session, "Runtime.evaluate", map[string]any{"expression": expr, "awaitPromise": true, "returnByValue": true}, &r); err != nil {
		return fmt.Errorf("evaluating %q: %v", expr, err)
	}
	if r.ExceptionDetails != nil {
		return fmt.Errorf("evaluating %q: %s %s", expr, r.ExceptionDetails.Text, r.ExceptionDetails.Exception.Description)
	}
	if out != nil {
		if err := json.Unmarshal(r.Result.Value, out); err != nil {
			return fmt.Errorf("evaluating %q: result %s: %v", expr, r.Result.Value, err)
		}
	}
	return nil
}

// waitFor polls a boolean expression until it holds.
func (b *browser) waitFor(t *testing.T, what, expr string, timeout time.Duration) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	for {
		// An error (the page navigating away under the evaluation) is
		// retried until the deadline.
		var ok bool
		err := b.tryEval("Boolean("+expr+")", &ok)
		if err == nil && ok {
			return
		}
		b.mu.Lock()
		for _, line := range b.console {
			if strings.HasPrefix(line, "Runtime.exceptionThrown") {
				b.mu.Unlock()
				t.Fatalf("waiting for %s: uncaught exception in the page: %s", what, line)
			}
		}
		b.mu.Unlock()
		select {
		case <-ctx.Done():
			b.mu.Lock()
			console := strings.Join(b.console, "\n")
			b.mu.Unlock()
			t.Fatalf("timed out after %v waiting for %s (%s; last error: %v)\npage console:\n%s", timeout, what, expr, err, console)
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// screenshot saves a PNG of the element with the given id to path.
func (b *browser) screenshot(t *testing.T, id, path string) {
	t.Helper()
	var rect struct{ X, Y, W, H float64 }
	b.eval(t, fmt.Sprintf(`(() => { const r = document.getElementById(%q).getBoundingClientRect();
		return {X: r.left + scrollX, Y: r.top + scrollY, W: r.width, H: r.height}; })()`, id), &rect)
	b.screenshotClip(t, rect.X, rect.Y, rect.W, rect.H, path)
}

// screenshotClip saves a PNG of a rectangle of the page (CSS pixels from
// the top left of the document).
func (b *browser) screenshotClip(t *testing.T, x, y, w, h float64, path string) {
	t.Helper()
	var shot struct{ Data string }
	b.call(t, b.session, "Page.captureScreenshot", map[string]any{
		"format": "png", "captureBeyondViewport": true,
		"clip": map[string]any{"x": x, "y": y, "width": w, "height": h, "scale": 1},
	}, &shot)
	png, err := base64.StdEncoding.DecodeString(shot.Data)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, png, 0o644); err != nil {
		t.Fatal(err)
	}
}
