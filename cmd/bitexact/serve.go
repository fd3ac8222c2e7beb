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
nothing from elsewhere. Stop it with Ctrl-C.`

func runServe(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := newFlags("serve", "serve [--addr 127.0.0.1:8080]", serveHelp, stderr)
	addr := fs.String("addr", "127.0.0.1:8080", "address to listen on (host:port; port 0 picks a free one)")
	if st, ok := parse(fs, args); !ok {
		return st
	}
	if fs.NArg() != 0 {
		return usageError(stderr, "serve", "unexpected argument %q", fs.Arg(0))
	}
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		fmt.Fprintf(stderr, "bitexact serve: %v\n", err)
		return exitUsage
	}
	srv := &http.Server{Handler: demo.Handler(), ReadHeaderTimeout: 10 * time.Second}
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
