// Command tool writes the FP8 block harness's inputs and turns its
// outputs into records.
//
//	go run ./conformance/harness/fp8block/tool inputs DIR
//	    writes DIR/inputs.safetensors (corpus.Inputs)
//	go run ./conformance/harness/fp8block/tool records OUT RECORDS DATE
//	    reads the harness's OUT/<job>.<device>.safetensors and writes
//	    RECORDS/<job>.<device>.json, dated DATE (YYYY-MM-DD)
package main

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/bitexact/bitexact/conformance/harness/fp8block/corpus"
	"github.com/bitexact/bitexact/internal/golden/safeio"
)

// implementations names the code each stack ran, by job prefix.
var implementations = map[string]string{
	"vllm-triton":            "vllm-project/vllm vllm/model_executor/layers/quantization/utils/fp8_utils.py @ 007d50058a06dec0f82472d63c819244d460c40d: _per_token_group_quant_fp8 (row) / _per_token_group_quant_fp8_colmajor (col), launched as per_token_group_quant_fp8's Triton path",
	"sglang-triton":          "sgl-project/sglang python/sglang/srt/layers/quantization/fp8_kernel.py @ 008601fa0ff2e0d398ae143f92172a8f719316f1: _per_token_group_quant_8bit (row) / _per_token_group_quant_8bit_colmajor (col, tma), launched as _per_token_group_quant_8bit_raw",
	"sglang-triton-colmajor": "sgl-project/sglang python/sglang/srt/layers/quantization/fp8_kernel.py @ 008601fa0ff2e0d398ae143f92172a8f719316f1: _per_token_group_quant_8bit_colmajor, scales column-major (col) or in create_per_token_group_quant_fp8_output_scale's TMA-aligned buffer (tma)",
	"sglang-triton-ue8m0":    "sgl-project/sglang python/sglang/srt/layers/quantization/fp8_kernel.py @ 008601fa0ff2e0d398ae143f92172a8f719316f1: _per_token_group_quant_8bit_colmajor SCALE_UE8M0, TMA-aligned scale buffer (float32, before transform_sf_into_required_layout)",
	"deepgemm":               "deepseek-ai/DeepGEMM deep_gemm/utils/math.py @ 54e22612409371d6364144b69086735beb54e98b: per_token_cast_to_fp8 (token) / per_block_cast_to_fp8 (block)",
	"te":                     "NVIDIA/TransformerEngine tests/pytorch/references/blockwise_quantizer_reference.py @ 1400f7a07693e64260a7ff5045a142879bd978dd (_quantize_vectorwise_reference / _quantize_square_block_tiling) with quantize_scale_calc.py @ 3580212c7d86bb0c2a0b697d7eeebe348a544966 (scale_from_amax_tensor), eps 0",
}

const command = "run(kind nvidia-h200, carry=[\".carry/h29fp8\"], command=\"cd .carry/h29fp8 && PYTHONUNBUFFERED=1 bash go.sh\"), the carry folder made as conformance/harness/fp8block/README.md says; then go run ./conformance/harness/fp8block/tool records fp8block-out conformance/harness/fp8block/corpus-records DATE"

func main() {
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "tool:", err)
		os.Exit(1)
	}
}

func run(args []string) error {
	switch {
	case len(args) == 2 && args[0] == "inputs":
		return safeio.WriteFile(filepath.Join(args[1], "inputs.safetensors"), corpus.Inputs(), 0o644)
	case len(args) == 4 && args[0] == "records":
		return records(args[1], args[2], args[3])
	}
	return fmt.Errorf("usage: tool inputs DIR | tool records OUT RECORDS DATE")
}

func records(out, dir, date string) error {
	files, err := filepath.Glob(filepath.Join(out, "*.safetensors"))
	if err != nil {
		return err
	}
	if len(files) == 0 {
		return fmt.Errorf("no .safetensors in %s", out)
	}
	sort.Strings(files)
	od, err := safeio.OpenOutDir(dir)
	if err != nil {
		return err
	}
	defer od.Close()
	for _, f := range files {
		r, err := record(f, date)
		if err != nil {
			return err
		}
		b, err := json.MarshalIndent(r, "", "  ")
		if err != nil {
			return err
		}
		name := strings.TrimSuffix(filepath.Base(f), ".safetensors") + ".json"
		if err := od.WriteFile(name, append(b, '\n'), 0o644); err != nil {
			return err
		}
	}
	return nil
}

func record(path, date string) (corpus.Record, error) {
	ts, meta, err := readSafetensors(path)
	if err != nil {
		return corpus.Record{}, err
	}
	if meta["error"] != "" {
		return corpus.Record{}, fmt.Errorf("%s: the harness could not run it: %s", path, meta["error"])
	}
	job, dev := meta["job"], meta["device"]
	stack, _, _ := strings.Cut(job, ".")
	impl := implementations[stack]
	for _, suffix := range []string{"-ue8m0", "-pow2"} {
		if impl == "" {
			impl = implementations[strings.TrimSuffix(stack, suffix)]
		}
	}
	if impl == "" {
		return corpus.Record{}, fmt.Errorf("%s: no implementation known for job %q", path, job)
	}
	r := corpus.Record{Job: job, Device: dev, Recipe: meta["recipe"], Granularity: meta["granularity"],
		Implementation: impl, Versions: map[string]string{"torch": meta["torch"]},
		Date: date, Command: command, Inputs: corpus.InputsDigest()}
	if strings.Contains(stack, "triton") {
		r.Versions["triton"] = meta["triton"]
	}
	r.Machine = meta["gpu"]
	if dev == "cpu" {
		r.Recipe += "@cpu"
		r.Machine = "the x86-64 host CPU of the " + meta["gpu"] + " machine"
	}
	if r.Recipe == "te@cpu" && r.Granularity == "1x128" {
		r.NaNScaleFromRecord = corpus.TorchMaximumNaN
	}
	for _, c := range corpus.Cases() {
		q, s := ts[c.Name+".q"], ts[c.Name+".s"]
		if len(q.data) != c.Rows*c.Cols || len(s.data)%4 != 0 {
			return corpus.Record{}, fmt.Errorf("%s: case %s: %d codes, %d scale bytes", path, c.Name, len(q.data), len(s.data))
		}
		scales := make([]float32, len(s.data)/4)
		for i := range scales {
			scales[i] = math.Float32frombits(binary.LittleEndian.Uint32(s.data[4*i:]))
		}
		cr := corpus.Digest(c, q.data, scales)
		for _, extra := range []string{"storage", "packed"} {
			if t, ok := ts[c.Name+"."+extra]; ok {
				if cr.Storage == nil {
					cr.Storage = map[string]string{}
				}
				cr.Storage[extra] = sha256hex(t.data)
			}
		}
		r.Cases = append(r.Cases, cr)
	}
	return r, nil
}
