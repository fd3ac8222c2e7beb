package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"time"

	"github.com/bitexact/bitexact/cmd/bitexact/internal/demo"
)

const serveHelp = `
Serve starts the browser demo: a page that runs the reference module
(the very refimpl.wasm that generates the golden data) in the browser and
shows a value's code under every profile, NVFP4/MXFP4 blocks, AWQ packing
and 2:4 selection. Everything is embedded in the binary; the page fetches
nothing from elsewhere. Stop it with Ctrl-C.

With --out DIR it serves nothing: it writes the page as static files into
DIR, for hosting without the Go server (see 'bitexact site').`

func runServe(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := newFlags("serve", "serve [--addr 127.0.0.1:8080] | serve --out DIR", serveHelp, stderr)
	addr := fs.String("addr", "127.0.0.1:8080", "address to listen on (host:port; port 0 picks a free one)")
	out := fs.String("out", "", "write the static site into `DIR` (new or empty) instead of serving")
	if st, ok := parse(fs, args); !ok {
		return st
	}
	if fs.NArg() != 0 {
		return usageError(stderr, "serve", "unexpected argument %q", fs.Arg(0))
	}
	if *out != "" {
		return writeSite(*out, stdout, stderr)
	}
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		fmt.Fprintf(stderr, "bitexact serve: %v\n", err)
		return exitUsage
	}
	srv := newServer()
	fmt.Fprintf(stdout, "bitexact demo at http://%s/ (Ctrl-C stops it)\n", ln.Addr())
	done := make(chan struct{})
	go func() {
		select {
		case <-ctx.Done():
			sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
			srv.Shutdown(sctx)
			cancel()
		case <-done:
		}
	}()
	err = srv.Serve(ln)
	close(done)
	if !errors.Is(err, http.ErrServerClosed) {
		fmt.Fprintf(stderr, "bitexact serve: %v\n", err)
		return exitUsage
	}
	return exitOK
}

// newServer is the demo's HTTP server. The timeouts bound what an idle or
// slow client can hold: a browser's keep-alive connection is closed after
// IdleTimeout, and no request or response may take longer than a minute
// (the largest response, the module, is a few MB).
func newServer() *http.Server {
	return &http.Server{
		Handler:           demo.Handler(),
		ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout:       30 * time.Second,
		WriteTimeout:      60 * time.Second,
		IdleTimeout:       2 * time.Minute,
	}
}
