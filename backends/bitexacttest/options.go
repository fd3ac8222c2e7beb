package bitexacttest

import (
	"runtime"
	"testing"
)

// Option adjusts a check.
type Option func(*config)

type config struct {
	sample     int // >0: sampled sweep of this many random inputs
	seed       uint64
	workers    int
	concurrent bool // a batch function may be called concurrently
	maxFirst   int
	// logf, when set, receives progress lines of a long sweep.
	logf func(format string, args ...any)
}

// logTo sends progress lines to t (set by the functions that take a
// testing.TB).
func logTo(t interface {
	Logf(format string, args ...any)
}, opts []Option) []Option {
	return append(opts[:len(opts):len(opts)], func(c *config) { c.logf = t.Logf })
}

// DefaultSample is the number of seeded random inputs a sampled sweep adds
// to the golden and edge inputs.
const DefaultSample = 1 << 20

// DefaultSeed seeds the random inputs of a sampled sweep.
const DefaultSeed = 0xb17e_7ac7

func newConfig(opts []Option) config {
	c := config{seed: DefaultSeed, workers: runtime.GOMAXPROCS(0), maxFirst: 8}
	// testing.Short panics outside a test binary, where the Check
	// functions may also run.
	if testing.Testing() && testing.Short() {
		c.sample = DefaultSample
	}
	for _, o := range opts {
		o(&c)
	}
	return c
}

// Sampled replaces the sweep over every input (2^32 float32 patterns) by
// the golden inputs, the format's edge inputs and n seeded random bit
// patterns (n <= 0: DefaultSample), as under go test -short. A sampled
// check says nothing of the inputs it did not try.
func Sampled(n int) Option {
	return func(c *config) {
		if n <= 0 {
			n = DefaultSample
		}
		c.sample = n
	}
}

// Exhaustive sweeps every input even under go test -short.
func Exhaustive() Option { return func(c *config) { c.sample = 0 } }

// Seed sets the seed of the random inputs of a sampled sweep (default
// DefaultSeed, so a failure repeats).
func Seed(seed uint64) Option { return func(c *config) { c.seed = seed } }

// Workers sets how many goroutines sweep the inputs (default GOMAXPROCS).
func Workers(n int) Option {
	return func(c *config) {
		if n > 0 {
			c.workers = n
		}
	}
}

// Concurrent lets a batch function (UnaryBatch) be called from several
// goroutines at once. By default batch calls are serialised, since a GPU
// launch usually holds a device, a stream and buffers; the reference and
// the comparison still run on every worker.
func Concurrent() Option { return func(c *config) { c.concurrent = true } }

// MaxReported sets how many differing inputs or elements a report decodes
// (default 8).
func MaxReported(n int) Option {
	return func(c *config) {
		if n > 0 {
			c.maxFirst = n
		}
	}
}
