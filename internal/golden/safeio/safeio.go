// Package safeio reads files named by untrusted input without letting
// them hang, exhaust memory or reach outside the folder they were named
// in: only regular files are read (never a named pipe, a device, a
// socket or a directory), never more than a stated limit, and inside a
// folder never through a symbolic link that leaves it.
//
// The checks are made on the opened file (fstat), not only on the name,
// so a file swapped between the check and the open is still refused; on
// Unix the open itself does not block on a named pipe (O_NONBLOCK).
package safeio

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
)

// Error says which file was refused and why.
type Error struct {
	Path    string
	Problem string
	// Err is the underlying error, if any (errors.Is(err, fs.ErrNotExist)
	// works through it).
	Err error
}

func (e *Error) Error() string { return e.Path + ": " + e.Problem }

func (e *Error) Unwrap() error { return e.Err }

// ReadFile reads the regular file at path (symbolic links followed: the
// caller named the path), at most limit bytes.
func ReadFile(path string, limit int64) ([]byte, error) {
	f, st, err := Open(path, limit)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return readAll(path, f, st, limit)
}

// Open opens the regular file at path for reading (symbolic links
// followed: the caller named the path) under the checks of ReadFile,
// for a reader that reads parts of it (an archive): a file of more than
// limit bytes is refused. The caller closes the file; the FileInfo is
// the opened file's (its size the one checked).
func Open(path string, limit int64) (*os.File, fs.FileInfo, error) {
	st, err := os.Stat(path)
	if err != nil {
		return nil, nil, &Error{Path: path, Problem: problem(err), Err: err}
	}
	if err := regular(path, st); err != nil {
		return nil, nil, err
	}
	f, err := os.OpenFile(path, os.O_RDONLY|openFlags, 0)
	if err != nil {
		return nil, nil, &Error{Path: path, Problem: problem(err), Err: err}
	}
	fst, err := check(path, f, st, limit)
	if err != nil {
		f.Close()
		return nil, nil, err
	}
	return f, fst, nil
}

// ReadFileIn reads the regular file name inside root, at most limit
// bytes. A symbolic link is followed only while it stays inside root.
func ReadFileIn(root *os.Root, name string, limit int64) ([]byte, error) {
	lst, err := root.Lstat(name)
	if err != nil {
		return nil, &Error{Path: name, Problem: problem(err), Err: err}
	}
	st := lst
	if lst.Mode()&fs.ModeSymlink != 0 {
		if st, err = root.Stat(name); err != nil {
			target, _ := root.Readlink(name)
			return nil, &Error{Path: name, Problem: fmt.Sprintf("a symbolic link (to %q) that leaves the folder or cannot be followed: %s", target, problem(err)), Err: err}
		}
	}
	if err := regular(name, st); err != nil {
		return nil, err
	}
	f, err := root.OpenFile(name, os.O_RDONLY|openFlags, 0)
	if err != nil {
		return nil, &Error{Path: name, Problem: problem(err), Err: err}
	}
	defer f.Close()
	return read(name, f, st, limit)
}

// read checks the opened file against the name's stat and reads it.
func read(name string, f *os.File, st fs.FileInfo, limit int64) ([]byte, error) {
	fst, err := check(name, f, st, limit)
	if err != nil {
		return nil, err
	}
	return readAll(name, f, fst, limit)
}

// check checks the opened file against the name's stat and the limit,
// and returns the opened file's stat.
func check(name string, f *os.File, st fs.FileInfo, limit int64) (fs.FileInfo, error) {
	fst, err := f.Stat()
	if err != nil {
		return nil, &Error{Path: name, Problem: problem(err), Err: err}
	}
	if err := regular(name, fst); err != nil {
		return nil, err
	}
	if !os.SameFile(st, fst) {
		return nil, &Error{Path: name, Problem: "changed while it was being opened"}
	}
	if fst.Size() > limit {
		return nil, &Error{Path: name, Problem: fmt.Sprintf("%d bytes, more than the %d it may hold", fst.Size(), limit)}
	}
	return fst, nil
}

// readAll reads the checked file f, at most limit bytes.
func readAll(name string, f *os.File, _ fs.FileInfo, limit int64) ([]byte, error) {
	b, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, &Error{Path: name, Problem: problem(err), Err: err}
	}
	if int64(len(b)) > limit {
		return nil, &Error{Path: name, Problem: fmt.Sprintf("grew past the %d bytes it may hold while being read", limit)}
	}
	return b, nil
}

// regular refuses everything but a regular file, naming what it is.
func regular(name string, st fs.FileInfo) error {
	m := st.Mode()
	if m.IsRegular() {
		return nil
	}
	what := "not a regular file"
	switch {
	case m.IsDir():
		what = "a directory, not a regular file"
	case m&fs.ModeNamedPipe != 0:
		what = "a named pipe (FIFO), not a regular file"
	case m&fs.ModeCharDevice != 0:
		what = "a character device, not a regular file"
	case m&fs.ModeDevice != 0:
		what = "a device, not a regular file"
	case m&fs.ModeSocket != 0:
		what = "a socket, not a regular file"
	case m&fs.ModeSymlink != 0:
		what = "a symbolic link, not a regular file"
	}
	return &Error{Path: name, Problem: what}
}

// problem is err's message without the path os already put in it.
func problem(err error) string {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Op + ": " + pe.Err.Error()
	}
	var le *os.LinkError
	if errors.As(err, &le) {
		return le.Op + ": " + le.Err.Error()
	}
	return err.Error()
}

// DirFS is an fs.FS over the directory dir whose ReadFile (which
// fs.ReadFile prefers) reads as ReadFileIn does: regular files only, no
// symbolic link out of dir, never blocking on a named pipe, at most limit
// bytes per file. Open and ReadDir go through os.Root, so they stay inside
// dir too. It is how a golden set or digest directory named on the
// command line is read: such a directory is as untrusted as a results
// folder.
func DirFS(dir string, limit int64) (fs.FS, error) {
	root, err := os.OpenRoot(dir)
	if err != nil {
		return nil, &Error{Path: dir, Problem: problem(err), Err: err}
	}
	return dirFS{root: root, fsys: root.FS(), limit: limit}, nil
}

type dirFS struct {
	root  *os.Root
	fsys  fs.FS
	limit int64
}

func (d dirFS) Open(name string) (fs.File, error) { return d.fsys.Open(name) }

func (d dirFS) ReadDir(name string) ([]fs.DirEntry, error) { return fs.ReadDir(d.fsys, name) }

func (d dirFS) ReadFile(name string) ([]byte, error) {
	if !fs.ValidPath(name) {
		return nil, &fs.PathError{Op: "readfile", Path: name, Err: fs.ErrInvalid}
	}
	return ReadFileIn(d.root, name, d.limit)
}

// ReadLimited reads r to its end, at most limit bytes: a stream that
// holds more (a decompressor's output, an archive member) is refused
// after limit+1 bytes, never read whole. name names the stream in the
// error.
func ReadLimited(name string, r io.Reader, limit int64) ([]byte, error) {
	b, err := io.ReadAll(io.LimitReader(r, limit+1))
	if err != nil {
		return nil, &Error{Path: name, Problem: problem(err), Err: err}
	}
	if int64(len(b)) > limit {
		return nil, &Error{Path: name, Problem: fmt.Sprintf("more than the %d bytes it may hold", limit)}
	}
	return b, nil
}
