// Package layers holds the module's import graph to a tower: its test
// lists every package of the module under each build configuration that
// selects different files (the host, -tags cuda, darwin with -tags metal,
// the wasip1 guest) and fails on any import of a package in a higher layer
// than the importer's. The layers, bottom up, are in the test's table.
//
// The package has no API; it exists for that test.
package layers
