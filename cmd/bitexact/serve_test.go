package main

import (
	"context"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/bitexact/bitexact/wasm"
)

// syncBuffer is a bytes buffer safe to read while the command writes.
type syncBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// TestServe starts `bitexact serve` on a free loopback port, fetches the
// page and the module, and stops it through its context as Ctrl-C does.
func TestServe(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var out, errb syncBuffer
	done := make(chan int, 1)
	go func() { done <- run(ctx, []string{"serve", "--addr", "127.0.0.1:0"}, &out, &errb) }()

	var url string
	for deadline := time.Now().Add(10 * time.Second); url == ""; {
		if _, rest, ok := strings.Cut(out.String(), "http://"); ok {
			if u, _, ok := strings.Cut(rest, " "); ok {
				url = "http://" + u
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("no URL printed; stdout %q stderr %q", out.String(), errb.String())
		}
		time.Sleep(10 * time.Millisecond)
	}
	get := func(path string) []byte {
		resp, err := http.Get(url + strings.TrimPrefix(path, "/"))
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		if err != nil || resp.StatusCode != 200 {
			t.Fatalf("GET %s: %d %v", path, resp.StatusCode, err)
		}
		return b
	}
	if page := string(get("/")); !strings.Contains(page, `<script type="module" src="app.js">`) {
		t.Errorf("GET /: not the demo page: %.200q", page)
	}
	if m := get("/refimpl.wasm"); string(m) != string(wasm.Module()) {
		t.Errorf("GET /refimpl.wasm: %d bytes, not the embedded module (%d bytes)", len(m), len(wasm.Module()))
	}
	cancel()
	select {
	case code := <-done:
		if code != exitOK {
			t.Errorf("exit status %d after interrupt, want %d; stderr %q", code, exitOK, errb.String())
		}
	case <-time.After(10 * time.Second):
		t.Fatal("serve did not stop when its context was cancelled")
	}
}

func TestServeUsage(t *testing.T) {
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"extra argument", []string{"serve", "x"}, `unexpected argument "x"`},
		{"bad address", []string{"serve", "--addr", "127.0.0.1:99999"}, "invalid port"},
		{"bad flag", []string{"serve", "--port", "1"}, "flag provided but not defined: -port"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var o, e syncBuffer
			code := run(context.Background(), tc.args, &o, &e)
			if stderr := e.String(); code != exitUsage || !strings.Contains(stderr, tc.want) {
				t.Errorf("exit %d, stderr %q; want %d and %q", code, e.String(), exitUsage, tc.want)
			}
		})
	}
}

// TestServerTimeouts: every timeout of the demo server is set, so that an
// idle keep-alive connection or a slow client cannot hold it forever.
func TestServerTimeouts(t *testing.T) {
	s := newServer()
	for name, d := range map[string]time.Duration{"ReadHeaderTimeout": s.ReadHeaderTimeout, "ReadTimeout": s.ReadTimeout, "WriteTimeout": s.WriteTimeout, "IdleTimeout": s.IdleTimeout} {
		if d <= 0 {
			t.Errorf("%s is %v, want a positive limit", name, d)
		}
	}
}
