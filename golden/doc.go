// Package golden is the versioned golden vector set: the inputs and the
// reference's expected outputs of every golden case, in safetensors files
// described by a manifest with the SHA-256 of each file.
//
// The default set is embedded (Default, DataFS). Load opens any set
// directory and refuses it unless its schema version is this build's and
// every file it lists exists with the recorded digest; Set.Inputs and
// Set.Expected then read a case's tensors. Check runs every case of a set
// through an Engine and compares the outputs with the expected files bit
// for bit (DiffTensors: no tolerance, every differing element counted);
// it is the core of `bitexact certify`.
//
// Build regenerates the set in memory from the case catalogue: inputs on
// the host from their seeds, expected outputs through an Engine (the wasm
// reference, Wasm, whose module digest the manifest records as its
// generator). The bytes depend on nothing but the catalogue and the
// reference, so Verify, which requires a set directory to be
// byte-identical to a regeneration, holds the committed set to its
// generator; `bitexact golden gen` and `bitexact golden verify` are the
// commands. SuiteVersion names the catalogue: it changes whenever a case
// is added, removed or altered.
package golden
