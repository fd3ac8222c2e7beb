package main

import (
	"fmt"
	"io/fs"
	"os"

	"github.com/bitexact/bitexact/internal/golden/safeio"
)

// goldenFileLimit bounds each file read from a directory named on the
// command line (--dir, --digests): the released set's largest file is a
// few MiB, so 256 MiB is far from any real set and still a bound on what a
// hostile one can make the tool allocate.
const goldenFileLimit = 256 << 20

// openDir opens a golden set or digest directory named on the command
// line. Such a directory is untrusted input like a results folder: its
// files are read through safeio (regular files inside it, no FIFO, a size
// limit).
func openDir(dir string) (fs.FS, error) {
	if st, err := os.Stat(dir); err != nil || !st.IsDir() {
		return nil, fmt.Errorf("golden set directory %s: not a directory", dir)
	}
	return safeio.DirFS(dir, goldenFileLimit)
}
