package certificate

import (
	"bytes"
	"crypto/ed25519"
	"crypto/rand"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"runtime"

	"github.com/bitexact/bitexact/internal/golden/safeio"
)

// SignatureAlgorithm is the only algorithm Signature uses.
const SignatureAlgorithm = "ed25519"

// signingContext prefixes the signed message, so that a signature over a
// certificate cannot be taken for a signature over anything else made
// with the same key.
const signingContext = "bitexact-certificate-signature/1\n"

// Signature is an ed25519 signature (crypto/ed25519, RFC 8032) over the
// canonical certificate: signingContext followed by the compact JSON
// encoding (encoding/json, fields in declaration order) of the
// certificate with Signature empty. It covers every field, including
// content_sha256 and the tool that wrote it.
//
// A valid signature proves that the holder of the private key issued
// exactly this certificate; it says nothing about who holds the key:
// verify-cert --pubkey checks it against a public key the verifier
// trusts.
type Signature struct {
	Algorithm string `json:"algorithm"`
	// PublicKey is the signer's 32-byte public key, base64 (standard).
	PublicKey string `json:"public_key"`
	// Value is the 64-byte signature, base64 (standard).
	Value string `json:"value"`
}

// signedMessage is what Sign signs and VerifySignature checks.
func (c *Certificate) signedMessage() ([]byte, error) {
	cp := *c
	cp.Signature = nil
	b, err := json.Marshal(&cp)
	if err != nil {
		return nil, err
	}
	return append([]byte(signingContext), b...), nil
}

// Sign seals c (content digest) and signs it with key, replacing any
// earlier signature.
func (c *Certificate) Sign(key ed25519.PrivateKey) error {
	if len(key) != ed25519.PrivateKeySize {
		return errors.New("not an ed25519 private key")
	}
	c.Signature = nil
	if err := c.seal(); err != nil {
		return err
	}
	msg, err := c.signedMessage()
	if err != nil {
		return err
	}
	pub := key.Public().(ed25519.PublicKey)
	c.Signature = &Signature{Algorithm: SignatureAlgorithm, PublicKey: base64.StdEncoding.EncodeToString(pub),
		Value: base64.StdEncoding.EncodeToString(ed25519.Sign(key, msg))}
	return nil
}

// SignerKey returns the public key c's signature names, without checking
// the signature.
func (c *Certificate) SignerKey() (ed25519.PublicKey, error) {
	if c.Signature == nil {
		return nil, reject("the certificate is unsigned")
	}
	if c.Signature.Algorithm != SignatureAlgorithm {
		return nil, reject("signature algorithm %q, this build verifies %q", c.Signature.Algorithm, SignatureAlgorithm)
	}
	pub, err := base64.StdEncoding.Strict().DecodeString(c.Signature.PublicKey)
	if err != nil || len(pub) != ed25519.PublicKeySize {
		return nil, reject("signature public key is not a base64 ed25519 key")
	}
	if smallOrder(pub) {
		return nil, reject("signature public key %s is a point of small order: a signature by it can be valid for any content, so it proves nothing", KeyFingerprint(pub))
	}
	return pub, nil
}

// verifySignature checks c's signature with the key it names and, when
// trusted is set, that this key is trusted.
func (c *Certificate) verifySignature(trusted ed25519.PublicKey) error {
	if c.Signature == nil {
		if trusted != nil {
			return reject("the certificate is unsigned, but a public key was given to check its signature")
		}
		return nil
	}
	pub, err := c.SignerKey()
	if err != nil {
		return err
	}
	if trusted != nil && !trusted.Equal(pub) {
		return reject("signed by key %s, not by the given key %s", KeyFingerprint(pub), KeyFingerprint(trusted))
	}
	sig, err := base64.StdEncoding.Strict().DecodeString(c.Signature.Value)
	if err != nil || len(sig) != ed25519.SignatureSize {
		return reject("signature value is not a base64 ed25519 signature")
	}
	if smallOrder(sig[:32]) {
		return reject("the signature's R is a point of small order, which no signer makes: refused, as such a signature can hold for content it was not made for")
	}
	msg, err := c.signedMessage()
	if err != nil {
		return err
	}
	if !ed25519.Verify(pub, msg, sig) {
		return reject("the ed25519 signature of key %s does not match the certificate: it was altered after signing or signed by another key", KeyFingerprint(pub))
	}
	return nil
}

// exactBytes requires a signed certificate's file b (when given) to be
// the bytes JSON writes for it. The signature covers the decoded
// certificate; without this check a file whose bytes differ (other
// whitespace, "\u0061" for "a", keys reordered) would carry the same
// valid signature, so the signed bytes could change under it.
func (c *Certificate) exactBytes(b []byte) error {
	if b == nil || c.Signature == nil {
		return nil
	}
	want, err := c.JSON()
	if err != nil {
		return err
	}
	if bytes.Equal(b, want) {
		return nil
	}
	i := 0
	for i < len(b) && i < len(want) && b[i] == want[i] {
		i++
	}
	return reject("the file is not byte for byte the signed certificate (it differs from the certificate's own encoding at byte %d): a signed certificate is accepted only in the exact bytes it was written in", i)
}

// KeyFingerprint names a public key: "SHA256:" and the first 16 bytes of
// its SHA-256, hex.
func KeyFingerprint(pub ed25519.PublicKey) string {
	h := sha256.Sum256(pub)
	return "SHA256:" + hex.EncodeToString(h[:16])
}

// PEM block types of the key files (PKCS #8 and PKIX, as openssl writes
// them: `openssl pkey -in key.pem -pubout` reads the private key file).
const (
	privatePEM = "PRIVATE KEY"
	publicPEM  = "PUBLIC KEY"
	maxKeyFile = 64 << 10
)

// GenerateKey writes a new ed25519 key pair: the private key to priv
// (PEM PKCS #8, mode 0600) and the public key to pub (PEM PKIX). It
// refuses to overwrite either file, or to write through a symbolic link
// (internal/golden/safeio.CreateFile): both names are checked before anything
// is written, and when the public key cannot be written after all (a
// file created there meanwhile) the private key just written is removed,
// so a failure leaves no half of a pair behind.
func GenerateKey(random io.Reader, priv, pub string) (ed25519.PublicKey, error) {
	if random == nil {
		random = rand.Reader
	}
	for _, p := range []string{priv, pub} {
		if _, err := os.Lstat(p); err == nil {
			return nil, fmt.Errorf("%s: file exists; keygen never overwrites a key file", p)
		} else if !errors.Is(err, fs.ErrNotExist) {
			return nil, err
		}
	}
	pk, sk, err := ed25519.GenerateKey(random)
	if err != nil {
		return nil, err
	}
	skb, err := x509.MarshalPKCS8PrivateKey(sk)
	if err != nil {
		return nil, err
	}
	pkb, err := x509.MarshalPKIXPublicKey(pk)
	if err != nil {
		return nil, err
	}
	if err := safeio.CreateFile(priv, pem.EncodeToMemory(&pem.Block{Type: privatePEM, Bytes: skb}), 0o600); err != nil {
		return nil, err
	}
	if err := safeio.CreateFile(pub, pem.EncodeToMemory(&pem.Block{Type: publicPEM, Bytes: pkb}), 0o644); err != nil {
		os.Remove(priv)
		return nil, err
	}
	return pk, nil
}

// KeyFileWarning is a warning when the private key file at path can be
// read by its group or by others (anyone who can read it can sign as its
// owner), and "" otherwise or where file modes mean nothing (Windows).
func KeyFileWarning(path string) string {
	st, err := os.Stat(path)
	if err != nil || runtime.GOOS == "windows" || st.Mode().Perm()&0o077 == 0 {
		return ""
	}
	return fmt.Sprintf("%s is readable by its group or by others (mode %04o): anyone who can read it can sign as you; chmod 600 it", path, st.Mode().Perm())
}

// LoadPrivateKey reads an ed25519 private key written by GenerateKey (or
// `openssl genpkey -algorithm ed25519`).
func LoadPrivateKey(path string) (ed25519.PrivateKey, error) {
	der, err := readPEM(path, privatePEM)
	if err != nil {
		return nil, err
	}
	k, err := x509.ParsePKCS8PrivateKey(der)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	sk, ok := k.(ed25519.PrivateKey)
	if !ok {
		return nil, fmt.Errorf("%s: a %T, not an ed25519 private key", path, k)
	}
	return sk, nil
}

// LoadPublicKey reads an ed25519 public key written by GenerateKey (or
// `openssl pkey -pubout`).
func LoadPublicKey(path string) (ed25519.PublicKey, error) {
	der, err := readPEM(path, publicPEM)
	if err != nil {
		return nil, err
	}
	k, err := x509.ParsePKIXPublicKey(der)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	pk, ok := k.(ed25519.PublicKey)
	if !ok {
		return nil, fmt.Errorf("%s: a %T, not an ed25519 public key", path, k)
	}
	if smallOrder(pk) {
		return nil, fmt.Errorf("%s: a point of small order, not a usable ed25519 public key (a signature by it can be valid for any content)", path)
	}
	return pk, nil
}

func readPEM(path, typ string) ([]byte, error) {
	b, err := safeio.ReadFile(path, maxKeyFile)
	if err != nil {
		return nil, err
	}
	blk, _ := pem.Decode(b)
	if blk == nil || blk.Type != typ {
		return nil, fmt.Errorf("%s: no PEM %q block", path, typ)
	}
	return blk.Bytes, nil
}
