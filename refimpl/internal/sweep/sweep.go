// Package sweep runs the exhaustive property tests of the refimpl packages:
// a check over every float32 magnitude (the 2^31 patterns with the sign bit
// clear; the check takes each with both signs), split into blocks and run
// on all cores, with progress in the test log.
//
// A full sweep costs minutes of CPU per package, so it runs only when the
// environment variable BITEXACT_EXHAUSTIVE is 1 (`make exhaustive`, its
// own step of CI). Otherwise the same check runs on a sample: one block in
// SampleStride, which lands at a different mantissa offset in every binade,
// plus the blocks holding the largest finite values, infinity and the
// first NaNs. So the default `go test ./...` still runs every oracle
// against real outputs, and the committed Merkle digests
// (golden/exhaustive) pin every output of every conversion. Counts over
// all 2^32 inputs are asserted only in a full sweep (Full). Under -short
// nothing runs.
package sweep

import (
	"os"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

const (
	// Block is the number of consecutive magnitudes one call of a check
	// covers.
	Block = 1 << 16
	// Unit divides every range a check is given (a sampled sweep hands
	// out ranges of Unit magnitudes).
	Unit = 1 << 10
	// Env is the environment variable that asks for full sweeps.
	Env = "BITEXACT_EXHAUSTIVE"
)

// Full reports whether sweeps cover every magnitude (BITEXACT_EXHAUSTIVE=1).
func Full() bool { return os.Getenv(Env) == "1" }

// Workers is the number of goroutines Run uses: GOMAXPROCS.
func Workers() int { return runtime.GOMAXPROCS(0) }

// sample lists the starts of the Unit-long ranges of a sampled sweep, in
// increasing order.
func sample() []int {
	var starts []int
	for e := range 256 {
		base := e << 23
		// One Unit at a pseudo-random offset (Knuth's multiplicative hash).
		r := int(uint32(e*2654435761)>>19) * Unit
		offs := []int{0, 0x200000 - Unit, 0x200000, 0x400000 - Unit, 0x400000, r, 0x600000 - Unit, 0x600000, 0x800000 - Unit}
		slices.Sort(offs)
		for _, off := range slices.Compact(offs) {
			starts = append(starts, base+off)
		}
	}
	return starts
}

// Run calls check(w, lo, hi) for ranges [lo, hi) of magnitudes that
// together cover [0, 2^31) when Full, else the sample, from Workers()
// goroutines; w in [0, Workers()) identifies the goroutine, so a check can
// keep per-goroutine state without locks. Blocks are handed out in
// increasing order but run concurrently: a check that compares an input
// with its predecessor recomputes the predecessor of lo itself. Every ten
// seconds Run logs the progress, rate and time left. Under -short it skips
// the test.
func Run(t testing.TB, name string, check func(w, lo, hi int)) {
	t.Helper()
	if testing.Short() {
		t.Skip("exhaustive sweep skipped under -short")
	}
	// ranges of n magnitudes starting at starts.
	starts, n := sample(), Unit
	if Full() {
		starts, n = make([]int, 1<<31/Block), Block
		for k := range starts {
			starts[k] = k * Block
		}
	}
	var next, done atomic.Int64
	stop := make(chan struct{})
	start := time.Now()
	var logWG sync.WaitGroup
	logWG.Go(func() {
		tick := time.NewTicker(10 * time.Second)
		defer tick.Stop()
		for {
			select {
			case <-stop:
				return
			case <-tick.C:
				d := float64(done.Load())
				el := time.Since(start)
				if d == 0 {
					continue
				}
				left := time.Duration(float64(el) * (float64(len(starts)) - d) / d)
				t.Logf("%s: %.1f%% of %d magnitudes, %.1f M/s, about %s left",
					name, 100*d/float64(len(starts)), len(starts)*n, d*float64(n)/el.Seconds()/1e6, left.Round(time.Second))
			}
		}
	})
	var wg sync.WaitGroup
	for w := range Workers() {
		wg.Go(func() {
			for {
				i := int(next.Add(1) - 1)
				if i >= len(starts) {
					return
				}
				lo := starts[i]
				check(w, lo, lo+n)
				done.Add(1)
			}
		})
	}
	wg.Wait()
	close(stop)
	logWG.Wait()
	what := "full sweep"
	if !Full() {
		what = "sampled sweep (set " + Env + "=1 for all 2^31 magnitudes: make exhaustive)"
	}
	t.Logf("%s: %s of %d magnitudes in %s", name, what, len(starts)*n, time.Since(start).Round(time.Millisecond))
}
