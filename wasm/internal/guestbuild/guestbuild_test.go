package guestbuild

import "testing"

func TestModuleGoVersion(t *testing.T) {
	// A minimal module: header and one custom section "producers" with
	// language: [Go go1.26.8] and processed-by: [Go cmd/compile go1.26.8],
	// as the Go linker writes it.
	sec := []byte{}
	str := func(s string) { sec = append(sec, byte(len(s))); sec = append(sec, s...) }
	str("producers")
	sec = append(sec, 2)
	str("language")
	sec = append(sec, 1)
	str("Go")
	str("go1.26.8")
	str("processed-by")
	sec = append(sec, 1)
	str("Go cmd/compile")
	str("go1.26.8")
	mod := append([]byte("\x00asm\x01\x00\x00\x00"), 0, byte(len(sec)))
	mod = append(mod, sec...)
	cases := []struct {
		name string
		b    []byte
		want string
	}{
		{"producers section", mod, "go1.26.8"},
		{"no custom section", []byte("\x00asm\x01\x00\x00\x00"), ""},
		{"not wasm", []byte("ELF"), ""},
		{"truncated", mod[:len(mod)-3], ""},
	}
	for _, c := range cases {
		if got := ModuleGoVersion(c.b); got != c.want {
			t.Errorf("%s: got %q, want %q", c.name, got, c.want)
		}
	}
}
