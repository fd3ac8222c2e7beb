package gemv

import (
	"encoding/binary"
	"math"
	"math/rand"
	"strings"
	"testing"

	"github.com/bitexact/bitexact/refimpl/e8m0"
	"github.com/bitexact/bitexact/refimpl/half"
)

// q81 builds one block_q8_1 with scale d (fp16 bits) and quants q.
func q81(d uint16, q [32]int8) []byte {
	b := make([]byte, Q81BlockBytes)
	binary.LittleEndian.PutUint16(b, d)
	for i, v := range q {
		b[4+i] = byte(v)
	}
	return b
}

func mxBlock(e uint8, qs [16]uint8) []byte { return append([]byte{e}, qs[:]...) }

func TestMXFP4Hand(t *testing.T) {
	seq := func(fma string, group string) Schedule {
		return mustLookup(t, "chunk=0,lanes=0,group="+group+",fma="+fma+",acc=fp32,partial=fp32,reduce=seq,out=fp32")
	}
	var basicQ [32]int8
	basicQ[0], basicQ[16] = 3, 1
	// Element 0 is code 0x2 (kvalue 2), element 16 code 0xF (kvalue -12),
	// both in qs[0]. e = 127: E8M0 1 * 0.5; d8 = 1.0. 0.5 * (2*3 - 12*1) = -3.
	basicW := mxBlock(127, [16]uint8{0xF2})
	basicA := q81(0x3C00, basicQ)

	// Halves of one block with integer sums -16385 (bytes 0-7) and +16385
	// (bytes 8-15): 10*(12*127) + 12*95 + 1*5 = 16385. e = 128 (E8M0 2 *
	// 0.5 = 1), d8 = 1+2^-10 (0x3C01), so d*16385 = 16401 + 2^-10, a tie
	// rounded to even 16401 in float32.
	var fq [32]int8
	for _, j := range []int{0, 1, 2, 3, 4, 5, 6, 7, 16, 17, 8, 9, 10, 11, 12, 13, 14, 15, 24, 25} {
		fq[j] = 127
	}
	fq[18], fq[19], fq[26], fq[27] = 95, 5, 95, 5
	fusedW := mxBlock(128, [16]uint8{0xFF, 0xFF, 0xFF, 0x9F, 0x0F, 0x0F, 0x0F, 0x0F, 0x77, 0x77, 0x77, 0x17, 0x07, 0x07, 0x07, 0x07})
	fusedA := q81(0x3C01, fq)

	var tinyQ [32]int8
	tinyQ[0] = 3
	for _, c := range []struct {
		name string
		w, a []byte
		s    Schedule
		want float32
	}{
		{"basic mmvq", basicW, basicA, MMVQ, -3},
		{"basic seq group 32", basicW, basicA, seq("0", "32"), -3},
		{"basic group 1", basicW, basicA, seq("1", "1"), -3},
		// One lane: acc = -16401, then fma(d, 16385, acc) = 2^-10 exactly.
		{"fused one lane", fusedW, fusedA, seq("1", "16"), float32(math.Ldexp(1, -10))},
		// Unfused: 16401 - 16401.
		{"unfused one lane", fusedW, fusedA, seq("0", "16"), 0},
		// mmvq: the halves go to lanes 0 and 1, each rounds alone: 0.
		{"mmvq halves in two lanes", fusedW, fusedA, MMVQ, 0},
		{"mmvq nofma", fusedW, fusedA, MMVQNoFMA, 0},
		// One group of 32: sumi = 0.
		{"group 32", fusedW, fusedA, seq("1", "32"), 0},
		// e = 0: 2^-127 * 0.5 = 2^-128; d8 = 5*2^-24: d = 5*2^-152 =
		// 1.25*2^-150 rounds to 2^-149; y = 2 * 3 * 2^-149.
		{"underflowing d", mxBlock(0, [16]uint8{0x02}), q81(0x0005, tinyQ), MMVQ, math.Float32frombits(6)},
		// d8 = 4*2^-24: d = 2^-150, half the smallest subnormal: ties to 0.
		{"d ties to zero", mxBlock(0, [16]uint8{0x02}), q81(0x0004, tinyQ), MMVQ, 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, err := MXFP4Q81GEMV(c.w, c.a, 1, 32, c.s)
			if err != nil {
				t.Fatal(err)
			}
			if math.Float32bits(got[0]) != math.Float32bits(c.want) {
				t.Errorf("got %g (%#08x), want %g (%#08x)", got[0], math.Float32bits(got[0]), c.want, math.Float32bits(c.want))
			}
		})
	}
	// e = 0xFF is the E8M0 NaN.
	got, err := MXFP4Q81GEMV(mxBlock(0xFF, [16]uint8{0x02}), basicA, 1, 32, MMVQ)
	if err != nil || !math.IsNaN(float64(got[0])) {
		t.Errorf("e=0xFF: got %v, %v; want NaN", got, err)
	}
}

// mmvqLiteral transcribes mul_mat_vec_q for one column on a generic NVIDIA
// device: 4 warps of 32 threads, thread tid takes blocks tid/2, tid/2+64,
// ..., half kqs = 2*(tid%2), vec_dot_mxfp4_q8_1 (ints kqs, kqs+1 of qs
// against q8 ints kqs+l and kqs+l+4), tmp = fma(d, sumi, tmp), warps 1..3
// added through shared memory, then __shfl_xor_sync offsets 16..1.
func mmvqLiteral(w, act []byte, n, k int) []float32 {
	nb := k / QK
	y := make([]float32, n)
	for row := 0; row < n; row++ {
		var tmp [128]float32
		for tid := 0; tid < 128; tid++ {
			for kbx := tid / 2; kbx < nb; kbx += 64 {
				blk := w[(row*nb+kbx)*MXFP4BlockBytes:]
				yb := act[kbx*Q81BlockBytes:]
				kqs := 2 * (tid % 2)
				var sumi int32
				for l := 0; l < 2; l++ {
					for b := 0; b < 4; b++ {
						c := blk[1+4*(kqs+l)+b]
						sumi += int32(KValuesMXFP4[c&0xF]) * int32(int8(yb[4+4*(kqs+l)+b]))
						sumi += int32(KValuesMXFP4[c>>4]) * int32(int8(yb[4+4*(kqs+l+4)+b]))
					}
				}
				d := float32(e8m0.Decode(blk[0]) * 0.5)
				d = float32(d * half.DecodeFP16(binary.LittleEndian.Uint16(yb)))
				tmp[tid] = fma32(d, float32(sumi), tmp[tid])
			}
		}
		var lane [32]float32
		for x := 0; x < 32; x++ {
			lane[x] = tmp[x]
			for l := 1; l < 4; l++ {
				lane[x] += tmp[32*l+x]
			}
		}
		for off := 16; off > 0; off >>= 1 {
			var next [32]float32
			for x := range next {
				next[x] = lane[x] + lane[x^off]
			}
			lane = next
		}
		y[row] = lane[0]
	}
	return y
}

func randomMXFP4(r *rand.Rand, n, k int) (w, act []byte) {
	nb := k / QK
	w = make([]byte, n*nb*MXFP4BlockBytes)
	for i := range w {
		w[i] = byte(r.Intn(256))
		if i%MXFP4BlockBytes == 0 {
			w[i] = byte(118 + r.Intn(16)) // E8M0 2^-9 .. 2^6
		}
	}
	act = make([]byte, nb*Q81BlockBytes)
	for b := 0; b < nb; b++ {
		binary.LittleEndian.PutUint16(act[b*Q81BlockBytes:], half.EncodeFP16(float32(r.Float64()*0.05+1e-4)))
		for j := 4; j < Q81BlockBytes; j++ {
			act[b*Q81BlockBytes+j] = byte(r.Intn(255) - 127)
		}
	}
	return w, act
}

func TestMXFP4Literal(t *testing.T) {
	r := rand.New(rand.NewSource(9))
	for _, k := range []int{32, 2048, 6400} { // 6400: 200 blocks, uneven over 64 per iteration
		w, act := randomMXFP4(r, 6, k)
		got, err := MXFP4Q81GEMV(w, act, 6, k, MMVQ)
		if err != nil {
			t.Fatal(err)
		}
		if want := mmvqLiteral(w, act, 6, k); !sameBits(got, want) {
			t.Errorf("K=%d: got %v, want %v", k, got, want)
		}
	}
}

func TestMXFP4Errors(t *testing.T) {
	w, a := randomMXFP4(rand.New(rand.NewSource(1)), 2, 64)
	for _, c := range []struct {
		name string
		w, a []byte
		n, k int
		s    Schedule
		want string
	}{
		{"K", w, a, 2, 48, MMVQ, "K=48"},
		{"weights", w[1:], a, 2, 64, MMVQ, "weights have 67 bytes, want N*K/32*17 = 68"},
		{"acts", w, a[:36], 2, 64, MMVQ, "activations have 36 bytes"},
		{"group", w, a, 2, 64, mustLookup(t, "chunk=0,lanes=0,group=64,fma=0,acc=fp32,partial=fp32,reduce=seq,out=fp32"), "group 64 does not divide"},
		{"schedule", w, a, 2, 64, Schedule{}, "group must be at least 1"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := MXFP4Q81GEMV(c.w, c.a, c.n, c.k, c.s)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("error = %v, want containing %q", err, c.want)
			}
		})
	}
}
