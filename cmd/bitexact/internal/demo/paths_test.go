package demo

import (
	"bufio"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// handlerPaths are a path under each handler of the demo: the page, a
// static asset, the module and the metadata.
var handlerPaths = []string{"/", "/index.html", "/app.js", "/refimpl.wasm", "/meta.json"}

// malformed are what is appended to a handler's path (or put after it as
// an element), as sent on the request line.
var malformed = []struct{ name, suffix string }{
	{"invalid UTF-8", "%ff"},
	{"invalid UTF-8 element", "/%ff"},
	{"overlong UTF-8", "%c0%af"},
	{"lone surrogate in UTF-8", "%ed%a0%80"},
	{"NUL", "%00"},
	{"NUL element", "/%00"},
	{"newline", "%0a"},
	{"DEL", "%7f"},
	{"escaped dot dot", "/%2e%2e/meta.json"},
	{"escaped dot", "/%2e/meta.json"},
	{"malformed escape", "%zz"},
	{"truncated escape", "%f"},
}

// TestMalformedPathsInProcess: every handler answers a malformed path
// (as the server decodes it) with 400, never 5xx and never a file.
func TestMalformedPathsInProcess(t *testing.T) {
	h := Handler()
	for _, base := range handlerPaths {
		for _, m := range malformed {
			if strings.Contains(m.name, "escape") && !strings.Contains(m.name, "escaped") {
				continue // not decodable: the server refuses it before any handler (TestMalformedPathsOnTheWire)
			}
			target := strings.TrimSuffix(base, "/") + m.suffix
			if base == "/" && !strings.HasPrefix(m.suffix, "/") {
				target = "/" + m.suffix
			}
			t.Run(base+" "+m.name, func(t *testing.T) {
				w := httptest.NewRecorder()
				h.ServeHTTP(w, httptest.NewRequest("GET", target, nil))
				if w.Code != http.StatusBadRequest {
					t.Errorf("GET %s: %d, want 400", target, w.Code)
				}
			})
		}
		// Well-formed paths still work (/index.html redirects to /).
		w := httptest.NewRecorder()
		h.ServeHTTP(w, httptest.NewRequest("GET", base, nil))
		if w.Code >= 400 {
			t.Errorf("GET %s: %d, want it served", base, w.Code)
		}
	}
	for _, p := range []string{"/missing.js", "/%e2%82%ac"} { // a missing file, valid UTF-8: 404
		w := httptest.NewRecorder()
		h.ServeHTTP(w, httptest.NewRequest("GET", p, nil))
		if w.Code != http.StatusNotFound {
			t.Errorf("GET %s: %d, want 404", p, w.Code)
		}
	}
}

// TestMalformedPathsOnTheWire sends raw request lines to a server running
// the handler: every malformed one gets a 4xx status.
func TestMalformedPathsOnTheWire(t *testing.T) {
	srv := httptest.NewServer(Handler())
	defer srv.Close()
	for _, base := range handlerPaths {
		for _, m := range append(malformed, struct{ name, suffix string }{"raw dot dot", "/../meta.json"}) {
			target := strings.TrimSuffix(base, "/") + m.suffix
			if base == "/" && !strings.HasPrefix(m.suffix, "/") {
				target = "/" + m.suffix
			}
			t.Run(base+" "+m.name, func(t *testing.T) {
				c, err := net.Dial("tcp", srv.Listener.Addr().String())
				if err != nil {
					t.Fatal(err)
				}
				defer c.Close()
				// A deadline only so that a broken server cannot hang the
				// suite; a working one answers at once.
				c.SetDeadline(time.Now().Add(time.Minute))
				if _, err := c.Write([]byte("GET " + target + " HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")); err != nil {
					t.Fatal(err)
				}
				resp, err := http.ReadResponse(bufio.NewReader(c), nil)
				if err != nil {
					t.Fatal(err)
				}
				resp.Body.Close()
				if resp.StatusCode < 400 || resp.StatusCode > 499 {
					t.Errorf("GET %s: %d, want 4xx", target, resp.StatusCode)
				}
			})
		}
	}
}
