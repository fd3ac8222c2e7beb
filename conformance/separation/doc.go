// Package separation holds the test that the golden inputs of every vendor
// suite tell apart every pair of plausible implementations of its op.
//
// The implementations are the reference's own variants of the op: every
// named profile of the suite, every diagnosis alternative
// (conformance/diagnose) against every profile, and every CPU mutant of
// internal/conformance/mutants certified on the suite. For each pair the test
// searches for an input on which the two differ (golden inputs perturbed
// at random, special values at every position of a block, exhaustive
// sweeps where the domain is small); a pair that differs somewhere but
// agrees on every golden input of the suite fails the test, which names
// the pair and a witness input, until the golden set holds an input that
// separates them.
//
// The package has no API: it sits above suite, diagnose and mutants in
// the import graph so that none of them imports it.
package separation
