package certificate

import (
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/base64"
	"math/big"
	"strings"
	"testing"
)

func b64(b []byte) string { return base64.StdEncoding.EncodeToString(b) }

// edwards25519 in affine coordinates over math/big: -x^2 + y^2 = 1 +
// d x^2 y^2 mod p, slow and only for this test.
var (
	edP = new(big.Int).Sub(new(big.Int).Lsh(big.NewInt(1), 255), big.NewInt(19))
	edD = func() *big.Int { // -121665/121666
		d := new(big.Int).ModInverse(big.NewInt(121666), edP)
		d.Mul(d, big.NewInt(-121665))
		return d.Mod(d, edP)
	}()
)

type edPoint struct{ x, y *big.Int }

func edMod(v *big.Int) *big.Int { return v.Mod(v, edP) }

func edAdd(a, b edPoint) edPoint {
	x1y2 := edMod(new(big.Int).Mul(a.x, b.y))
	y1x2 := edMod(new(big.Int).Mul(a.y, b.x))
	y1y2 := edMod(new(big.Int).Mul(a.y, b.y))
	x1x2 := edMod(new(big.Int).Mul(a.x, b.x))
	t := edMod(new(big.Int).Mul(edD, edMod(new(big.Int).Mul(x1x2, y1y2))))
	dx := new(big.Int).ModInverse(edMod(new(big.Int).Add(big.NewInt(1), t)), edP)
	dy := new(big.Int).ModInverse(edMod(new(big.Int).Sub(big.NewInt(1), t)), edP)
	return edPoint{
		edMod(new(big.Int).Mul(edMod(new(big.Int).Add(x1y2, y1x2)), dx)),
		edMod(new(big.Int).Mul(edMod(new(big.Int).Add(y1y2, x1x2)), dy)),
	}
}

// edDecode decodes y (little-endian, sign bit cleared) reduced mod p and
// returns the points with that y (none when y is on no point).
func edDecode(b [32]byte) []edPoint {
	be := make([]byte, 32)
	for i := range b {
		be[31-i] = b[i]
	}
	be[0] &= 0x7f
	y := edMod(new(big.Int).SetBytes(be))
	y2 := edMod(new(big.Int).Mul(y, y))
	num := edMod(new(big.Int).Sub(y2, big.NewInt(1)))
	den := edMod(new(big.Int).Add(edMod(new(big.Int).Mul(edD, y2)), big.NewInt(1)))
	x2 := edMod(new(big.Int).Mul(num, new(big.Int).ModInverse(den, edP)))
	x := new(big.Int).ModSqrt(x2, edP)
	if x == nil {
		return nil
	}
	ps := []edPoint{{x, y}}
	if x.Sign() != 0 {
		ps = append(ps, edPoint{edMod(new(big.Int).Neg(x)), y})
	}
	return ps
}

// The list holds y coordinates of exactly eight distinct points, each of
// order dividing 8: the whole 8-torsion subgroup (cyclic of order 8), so
// no small-order point is missing; its entries at or above p are the
// non-canonical spellings of 0 and 1.
func TestSmallOrderPoints(t *testing.T) {
	identity := edPoint{big.NewInt(0), big.NewInt(1)}
	seen := map[string]bool{}
	for i, y := range smallOrderY {
		ps := edDecode(y)
		if len(ps) == 0 {
			t.Fatalf("entry %d: no point has this y", i)
		}
		for _, p := range ps {
			q := p
			for range 3 { // q = 8p
				q = edAdd(q, q)
			}
			if q.x.Sign() != 0 || q.y.Cmp(identity.y) != 0 {
				t.Errorf("entry %d: 8P is not the identity: not of small order", i)
			}
			seen[p.x.String()+","+p.y.String()] = true
		}
	}
	if len(seen) != 8 {
		t.Errorf("%d distinct points, want the 8 of the torsion subgroup", len(seen))
	}
}

func TestSmallOrder(t *testing.T) {
	for i, y := range smallOrderY {
		b := y
		if !smallOrder(b[:]) {
			t.Errorf("entry %d not refused", i)
		}
		b[31] |= 0x80 // the other sign of x (for x = 0, a non-canonical spelling)
		if !smallOrder(b[:]) {
			t.Errorf("entry %d with the sign bit set not refused", i)
		}
	}
	// Real keys are never of small order.
	for i := range 64 {
		seed := sha256.Sum256([]byte{byte(i)})
		pub := ed25519.NewKeyFromSeed(seed[:]).Public().(ed25519.PublicKey)
		if smallOrder(pub) {
			t.Errorf("key from seed %d refused", i)
		}
		sig := ed25519.Sign(ed25519.NewKeyFromSeed(seed[:]), []byte("m"))
		if smallOrder(sig[:32]) {
			t.Errorf("R of a signature by key %d refused", i)
		}
	}
}

// The keyless signature: the identity as public key, R the identity and
// S = 0 satisfy crypto/ed25519's check for any message; the certificate
// refuses them.
func TestKeylessSignature(t *testing.T) {
	pub := make(ed25519.PublicKey, 32)
	pub[0] = 1
	sig := make([]byte, 64)
	sig[0] = 1
	if !ed25519.Verify(pub, []byte("any content"), sig) {
		t.Skip("crypto/ed25519 refuses the identity key itself now; the check below is still wanted")
	}
	c := &Certificate{Format: Format}
	c.Signature = &Signature{Algorithm: SignatureAlgorithm, PublicKey: b64(pub), Value: b64(sig)}
	if _, err := c.SignerKey(); err == nil {
		t.Error("SignerKey accepted the identity point")
	}
	if err := c.verifySignature(nil); err == nil {
		t.Error("the keyless signature verified")
	}
	// A real key with a small-order R.
	seed := sha256.Sum256([]byte("k"))
	k := ed25519.NewKeyFromSeed(seed[:])
	c.Signature.PublicKey = b64(k.Public().(ed25519.PublicKey))
	if err := c.verifySignature(nil); err == nil || !strings.Contains(err.Error(), "R is a point of small order") {
		t.Errorf("small-order R: %v", err)
	}
}
