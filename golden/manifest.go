package golden

// SchemaVersion is the version of the manifest's JSON layout. A reader
// refuses other versions rather than guess at fields.
const SchemaVersion = 1

// SuiteVersion names the golden set: the case catalog, its generators and
// seeds. It changes whenever a case is added, removed or altered; a change
// of expected outputs with the same catalog shows up in the file digests
// and the generator digest instead.
const SuiteVersion = "2026.12-1"

// ManifestFile is the manifest's name inside a golden set directory.
const ManifestFile = "manifest.json"

// Manifest describes a golden set: what each file holds, how its inputs
// were generated, and the SHA-256 of every file.
type Manifest struct {
	Schema int    `json:"schema"`
	Suite  string `json:"suite"`
	// Generator names the engine that computed the expected outputs:
	// "wasm sha256:<hex>" is the digest of the reference module.
	Generator string `json:"generator"`
	// PRNG names the integer generator behind every seeded input.
	PRNG   string      `json:"prng"`
	Inputs []InputFile `json:"inputs"`
	Cases  []CaseFile  `json:"cases"`
}

// InputFile is one input set: a safetensors file shared by the cases that
// name it.
type InputFile struct {
	Name        string       `json:"name"`
	Description string       `json:"description"`
	Seed        uint64       `json:"seed"`
	File        string       `json:"file"`
	SHA256      string       `json:"sha256"`
	Bytes       int          `json:"bytes"`
	Tensors     []TensorInfo `json:"tensors"`
}

// CaseFile is one golden case: an op with its parameters applied to an
// input set, and the file of expected outputs.
type CaseFile struct {
	Name        string            `json:"name"`
	Family      string            `json:"family"`
	Op          string            `json:"op"`
	Params      map[string]string `json:"params"`
	Description string            `json:"description"`
	Inputs      string            `json:"inputs"`
	File        string            `json:"file"`
	SHA256      string            `json:"sha256"`
	Bytes       int               `json:"bytes"`
	Outputs     []TensorInfo      `json:"outputs"`
}

// TensorInfo records one tensor of a file.
type TensorInfo struct {
	Name    string `json:"name"`
	DType   string `json:"dtype"`
	Logical string `json:"logical,omitempty"`
	Shape   []int  `json:"shape"`
}
