// Command tool writes the ggml GGUF harness's corpus and turns gguf.c's
// outputs into a record (see ../README.md):
//
//	tool corpus DIR                  write the input files into DIR
//	tool record [-partial] -profile P -implementation I -build B -command C DIR OUT
//	                                 digest DIR's outputs into record OUT
//	tool compare PROFILE DIR         list where refimpl/gguf under PROFILE
//	                                 differs from DIR's outputs
package main

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"sort"

	ggmlgguf "github.com/bitexact/bitexact/conformance/harness/ggml-gguf/corpus"
	"github.com/bitexact/bitexact/internal/golden/safeio"
	"github.com/bitexact/bitexact/refimpl/gguf"
)

func main() {
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "tool:", err)
		os.Exit(1)
	}
}

func run(args []string) error {
	if len(args) == 0 {
		return fmt.Errorf("usage: tool corpus DIR | record ... DIR OUT | compare PROFILE DIR")
	}
	switch args[0] {
	case "corpus":
		if len(args) != 2 {
			return fmt.Errorf("usage: tool corpus DIR")
		}
		in := ggmlgguf.Inputs()
		names := make([]string, 0, len(in))
		for n := range in {
			names = append(names, n)
		}
		sort.Strings(names)
		od, err := safeio.OpenOutDir(args[1])
		if err != nil {
			return err
		}
		defer od.Close()
		for _, n := range names {
			if err := od.WriteFile(n, in[n], 0o644); err != nil {
				return err
			}
		}
		return nil
	case "record":
		fs := flag.NewFlagSet("record", flag.ContinueOnError)
		var rec ggmlgguf.Record
		fs.StringVar(&rec.Profile, "profile", "", "the refimpl/gguf profile the record is held to")
		fs.StringVar(&rec.Implementation, "implementation", "", "ggml-org/ggml@COMMIT")
		fs.StringVar(&rec.Build, "build", "", "compiler, flags, arch")
		fs.StringVar(&rec.Command, "command", "", "the command that reruns it")
		partial := fs.Bool("partial", false, "record the ops whose output files exist (an implementation with fewer types)")
		if err := fs.Parse(args[1:]); err != nil {
			return err
		}
		if fs.NArg() != 2 {
			return fmt.Errorf("usage: tool record -profile P -implementation I -build B -command C DIR OUT")
		}
		if _, err := gguf.LookupProfile(rec.Profile); err != nil {
			return err
		}
		outs, err := ggmlgguf.ReadOutputs(fs.Arg(0), *partial)
		if err != nil {
			return err
		}
		for _, o := range outs {
			op, err := o.Digest()
			if err != nil {
				return err
			}
			rec.Ops = append(rec.Ops, op)
		}
		rec.Corpus = ggmlgguf.CorpusDigest()
		var buf bytes.Buffer
		enc := json.NewEncoder(&buf)
		enc.SetEscapeHTML(false)
		enc.SetIndent("", "  ")
		if err := enc.Encode(rec); err != nil {
			return err
		}
		return safeio.WriteFile(fs.Arg(1), buf.Bytes(), 0o644)
	case "compare":
		if len(args) != 3 {
			return fmt.Errorf("usage: tool compare PROFILE DIR")
		}
		p, err := gguf.LookupProfile(args[1])
		if err != nil {
			return err
		}
		outs, err := ggmlgguf.ReadOutputs(args[2], true)
		if err != nil {
			return err
		}
		var rec ggmlgguf.Record
		for _, o := range outs {
			op, err := o.Digest()
			if err != nil {
				return err
			}
			rec.Ops = append(rec.Ops, op)
		}
		ref, err := ggmlgguf.Reference(p)
		if err != nil {
			return err
		}
		diffs, err := ggmlgguf.Compare(rec, ref)
		if err != nil {
			return err
		}
		for _, d := range diffs {
			fmt.Println(d)
		}
		if len(diffs) > 0 {
			return fmt.Errorf("%d ops differ from profile %s", len(diffs), p.Name)
		}
		fmt.Printf("all %d ops match profile %s\n", len(outs), p.Name)
		return nil
	}
	return fmt.Errorf("unknown command %q", args[0])
}
