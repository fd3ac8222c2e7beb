// Package corpus is the FP8 block quantizer harness's inputs and records:
// Cases builds the inputs deterministically, Record is what one stack did
// on them on one device (output digests and the raw scales), and Check
// holds a record to its refimpl/fp8block recipe bit for bit.
package corpus

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"math"
	"math/rand"
)

// Group is the group length and block edge every harness job uses.
const Group = 128

// Case is one input matrix, rows x cols float32 row-major, cols a
// multiple of Group.
type Case struct {
	Name       string
	Rows, Cols int
	X          []float32
}

func f32(b uint32) float32 { return math.Float32frombits(b) }

// Cases returns the harness inputs. "edges" holds one hand-made 1x128
// group per row: amax 448*2^k (k = -3..3); all zero; all -0; a +NaN
// element; a -NaN element; +Inf; -Inf; subnormals; amax 448*2^e*(1 +
// j*2^-23) for e in {-9, -5, -4, -1, 1, 4} and j in {1, 2, 8, 64}, where
// amax/448 lies just above a power of two and exp2(ceil(log2)) and the
// exponent-bit ceiling split; normal rows up to a multiple of 8. "shape"
// is 130 x 640 normal values of magnitudes 2^-6..2^5 (M not a multiple of
// 128, K = 640 > 512). The generator is math/rand seeded 29: the same on
// every platform.
func Cases() []Case {
	rng := rand.New(rand.NewSource(29))
	var rows [][]float32
	row := func(f func(i int) float32) {
		r := make([]float32, Group)
		for i := range r {
			r[i] = f(i)
		}
		rows = append(rows, r)
	}
	normal := func(int) float32 { return float32(rng.NormFloat64()) }
	with := func(at int, v float32) func(int) float32 {
		return func(i int) float32 {
			if i == at {
				return v
			}
			return normal(i)
		}
	}
	for k := -3; k <= 3; k++ {
		row(with(5, float32(448*math.Ldexp(1, k))))
	}
	row(func(int) float32 { return 0 })
	row(func(int) float32 { return float32(math.Copysign(0, -1)) })
	row(with(3, f32(0x7fc00000)))
	row(with(0, f32(0xffc00000)))
	row(with(7, float32(math.Inf(1))))
	row(with(7, float32(math.Inf(-1))))
	row(func(i int) float32 { return f32(uint32(i) * 1000) })
	for _, e := range []int{-9, -5, -4, -1, 1, 4} {
		for _, j := range []uint32{1, 2, 8, 64} {
			top := float32(448 * math.Ldexp(1, e))
			row(func(i int) float32 {
				if i == 1 {
					return f32(math.Float32bits(top) + j)
				}
				return float32(rng.Float64() * float64(top))
			})
		}
	}
	for len(rows)%8 != 0 {
		row(normal)
	}
	edges := Case{Name: "edges", Rows: len(rows), Cols: Group}
	for _, r := range rows {
		edges.X = append(edges.X, r...)
	}
	shape := Case{Name: "shape", Rows: 130, Cols: 640, X: make([]float32, 130*640)}
	for i := range shape.X {
		shape.X[i] = float32(rng.NormFloat64() * math.Ldexp(1, rng.Intn(12)-6))
	}
	return []Case{edges, shape}
}

// Inputs returns the cases as the safetensors file the harness reads
// (inputs.safetensors): one F32 tensor [rows, cols] per case, in case
// order, the JSON header padded with spaces to a multiple of 8 bytes.
func Inputs() []byte {
	header := map[string]any{}
	var body []byte
	for _, c := range Cases() {
		off := len(body)
		for _, v := range c.X {
			body = binary.LittleEndian.AppendUint32(body, math.Float32bits(v))
		}
		header[c.Name] = map[string]any{"dtype": "F32", "shape": []int{c.Rows, c.Cols}, "data_offsets": []int{off, len(body)}}
	}
	h, err := json.Marshal(header)
	if err != nil {
		panic(err) // maps of strings and ints always marshal
	}
	for len(h)%8 != 0 {
		h = append(h, ' ')
	}
	out := binary.LittleEndian.AppendUint64(nil, uint64(len(h)))
	return append(append(out, h...), body...)
}

// InputsDigest is the SHA-256 of Inputs, hex.
func InputsDigest() string {
	s := sha256.Sum256(Inputs())
	return hex.EncodeToString(s[:])
}
