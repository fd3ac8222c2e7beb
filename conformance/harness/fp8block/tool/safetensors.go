package main

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
)

type tensor struct {
	dtype string
	shape []int
	data  []byte
}

func sha256hex(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

// readSafetensors reads a safetensors file's tensors and metadata.
func readSafetensors(path string) (map[string]tensor, map[string]string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, nil, err
	}
	if len(b) < 8 {
		return nil, nil, fmt.Errorf("%s: truncated", path)
	}
	n := binary.LittleEndian.Uint64(b)
	if n > uint64(len(b)-8) {
		return nil, nil, fmt.Errorf("%s: header length %d beyond the file", path, n)
	}
	var hdr map[string]json.RawMessage
	if err := json.Unmarshal(b[8:8+n], &hdr); err != nil {
		return nil, nil, fmt.Errorf("%s: %v", path, err)
	}
	body := b[8+n:]
	meta := map[string]string{}
	out := map[string]tensor{}
	for k, v := range hdr {
		if k == "__metadata__" {
			if err := json.Unmarshal(v, &meta); err != nil {
				return nil, nil, fmt.Errorf("%s: metadata: %v", path, err)
			}
			continue
		}
		var h struct {
			DType   string `json:"dtype"`
			Shape   []int  `json:"shape"`
			Offsets [2]int `json:"data_offsets"`
		}
		if err := json.Unmarshal(v, &h); err != nil {
			return nil, nil, fmt.Errorf("%s: tensor %s: %v", path, k, err)
		}
		if h.Offsets[0] < 0 || h.Offsets[1] < h.Offsets[0] || h.Offsets[1] > len(body) {
			return nil, nil, fmt.Errorf("%s: tensor %s: offsets %v outside the body", path, k, h.Offsets)
		}
		out[k] = tensor{h.DType, h.Shape, body[h.Offsets[0]:h.Offsets[1]]}
	}
	return out, meta, nil
}
