package main

import (
	"bufio"
	"os"
	"strings"
	"testing"
)

func TestEncodeNegativeValues(t *testing.T) {
	for _, c := range []struct {
		name string
		args []string
		want []string // in stdout, in order
	}{
		{"minus one", []string{"encode", "-1"}, []string{"x = -1  (float32 bits 0xbf800000)"}},
		{"minus infinity", []string{"encode", "-inf"}, []string{"x = -Inf  (float32 bits 0xff800000)"}},
		{"negative exponent", []string{"encode", "-1e-3"}, []string{"x = -0.001  (float32 bits 0xba83126f)"}},
		{"negative NaN", []string{"encode", "-nan"}, []string{"x = -NaN(0xffc00000)"}},
		{"after a flag with a value", []string{"encode", "--format", "e2m1", "-0.75", "2"},
			[]string{"x = -0.75", "e2m1/nvidia", "x = 2"}},
		{"flag after values", []string{"encode", "-0.75", "--format=e2m1"}, []string{"x = -0.75", "e2m1/nvidia"}},
		{"after --", []string{"encode", "--", "-2"}, []string{"x = -2"}},
		{"in a block", []string{"encode", "--block", "mxfp4", "-6", "-0.5"}, []string{"2 values in 1 block of 32", "-6", "0xf"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			code, out, errOut := bitexact(t, c.args...)
			if code != exitOK {
				t.Fatalf("exit %d; stderr:\n%s", code, errOut)
			}
			rest := out
			for _, w := range c.want {
				i := strings.Index(rest, w)
				if i < 0 {
					t.Fatalf("stdout lacks %q (in order):\n%s", w, out)
				}
				rest = rest[i+len(w):]
			}
		})
	}
	// Only what parses as a number is a value: an unknown flag is still one.
	if code, _, errOut := bitexact(t, "encode", "-x", "1"); code != exitUsage || !strings.Contains(errOut, "flag provided but not defined: -x") {
		t.Errorf("encode -x 1: exit %d, stderr %q", code, errOut)
	}
}

func TestEncodeProfileNeedsBlock(t *testing.T) {
	code, out, errOut := bitexact(t, "encode", "--profile", "nvidia", "1")
	if code != exitUsage || out != "" || !strings.Contains(errOut, `--profile "nvidia" needs --block nvfp4|mxfp4`) {
		t.Errorf("encode --profile without --block: exit %d, stdout %q, stderr %q", code, out, errOut)
	}
	code, out, errOut = bitexact(t, "encode", "--block", "mxfp4", "--profile", "ml_dtypes", "1")
	if code != exitOK || !strings.Contains(out, "mxfp4 (profile ml_dtypes): 1 value in 1 block of 32") {
		t.Errorf("encode --block mxfp4 --profile ml_dtypes: exit %d, stdout %q, stderr %q", code, out, errOut)
	}
}

func TestEncodeBlockCounts(t *testing.T) {
	args := []string{"encode", "--block", "nvfp4"}
	for range 17 {
		args = append(args, "1")
	}
	code, out, errOut := bitexact(t, args...)
	if code != exitOK || !strings.Contains(out, "17 values in 2 blocks of 16") {
		t.Errorf("17 values: exit %d, stdout %q, stderr %q", code, out, errOut)
	}
}

// The README's encode examples run as written.
func TestREADMEEncodeExamples(t *testing.T) {
	f, err := os.Open("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	n := 0
	for sc := bufio.NewScanner(f); sc.Scan(); {
		line, ok := strings.CutPrefix(strings.TrimSpace(sc.Text()), "go run ./cmd/bitexact encode ")
		if !ok {
			continue
		}
		line, _, _ = strings.Cut(line, "#")
		args := append([]string{"encode"}, strings.Fields(line)...)
		n++
		if code, _, errOut := bitexact(t, args...); code != exitOK {
			t.Errorf("README: bitexact %s: exit %d: %s", strings.Join(args, " "), code, errOut)
		}
	}
	if n < 2 {
		t.Errorf("found %d encode examples in the README, want the 2 it shows", n)
	}
}
