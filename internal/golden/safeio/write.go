package safeio

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"io/fs"
	"os"
	"path"
	"path/filepath"
)

// Writing. Every file the module writes goes through OutDir, so that an
// output folder another user could write into (a shared results folder,
// a site directory, a checkout) cannot redirect a write:
//
//   - A file is never written through a symbolic link. WriteFile writes a
//     new file beside the target, created exclusively (O_CREATE|O_EXCL:
//     never an existing file or link), and renames it over the target;
//     rename replaces a directory entry and never follows a link there,
//     so a link planted at any moment, even after the check, is replaced,
//     not written through. A target that already is a link (or a
//     directory, a named pipe, a device) is refused with its name, so
//     the user learns of it instead of losing it silently.
//   - CreateFile creates the target exclusively: it fails when anything,
//     a dangling link included, is there.
//   - Names are resolved inside the folder (os.Root): a subfolder that is
//     a link out of it, or a name with "..", is refused.
//   - Nothing already written is lost on failure: the old file stays
//     until the rename, and a failed write removes only the file it
//     created.
//
// The folder itself is the caller's to name and is followed as given.

// OutDir is a folder files are written into.
type OutDir struct {
	root *os.Root
	path string
}

// OpenOutDir creates the folder dir (with its parents, mode 0755 before
// the umask) if it does not exist and opens it for writing.
func OpenOutDir(dir string) (*OutDir, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, &Error{Path: dir, Problem: problem(err), Err: err}
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		return nil, &Error{Path: dir, Problem: problem(err), Err: err}
	}
	return &OutDir{root: root, path: dir}, nil
}

// Close releases the folder.
func (d *OutDir) Close() error { return d.root.Close() }

// Path is the folder's name as given to OpenOutDir.
func (d *OutDir) Path() string { return d.path }

// display is name (slash-separated, inside d) as the user reads it.
func (d *OutDir) display(name string) string {
	return filepath.Join(d.path, filepath.FromSlash(name))
}

// check refuses a name that is not a plain relative path inside d.
func (d *OutDir) check(name string) error {
	if !fs.ValidPath(name) || name == "." {
		return &Error{Path: d.display(name), Problem: "not a file name inside the output folder"}
	}
	return nil
}

// mkdirs creates the folders above name inside d.
func (d *OutDir) mkdirs(name string) error {
	if dir := path.Dir(name); dir != "." {
		if err := d.root.MkdirAll(dir, 0o755); err != nil {
			return &Error{Path: d.display(dir), Problem: problem(err), Err: err}
		}
	}
	return nil
}

// WriteFile writes data to the file name (slash-separated, inside d),
// replacing a regular file there and creating the folders above it. The
// new file has mode perm before the umask. A symbolic link, directory or
// other non-regular file at name is refused, and nothing is written.
func (d *OutDir) WriteFile(name string, data []byte, perm fs.FileMode) error {
	if err := d.check(name); err != nil {
		return err
	}
	if err := d.mkdirs(name); err != nil {
		return err
	}
	if st, err := d.root.Lstat(name); err == nil {
		if err := writable(d.display(name), st); err != nil {
			return err
		}
	} else if !errors.Is(err, fs.ErrNotExist) {
		return &Error{Path: d.display(name), Problem: problem(err), Err: err}
	}
	tmp, err := d.create(path.Join(path.Dir(name), "."+path.Base(name)+".tmp-"), data, perm)
	if err != nil {
		return err
	}
	if testHookBeforeRename != nil {
		testHookBeforeRename(name)
	}
	if err := d.root.Rename(tmp, name); err != nil {
		d.root.Remove(tmp)
		return &Error{Path: d.display(name), Problem: problem(err), Err: err}
	}
	return nil
}

// CreateFile writes data to the new file name (slash-separated, inside
// d), creating the folders above it. Anything already at name, a
// symbolic link included, is refused and left as it is.
func (d *OutDir) CreateFile(name string, data []byte, perm fs.FileMode) error {
	if err := d.check(name); err != nil {
		return err
	}
	if err := d.mkdirs(name); err != nil {
		return err
	}
	f, err := d.root.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, perm)
	if err != nil {
		if errors.Is(err, fs.ErrExist) {
			return &Error{Path: d.display(name), Problem: "already exists; nothing there is overwritten", Err: err}
		}
		return &Error{Path: d.display(name), Problem: problem(err), Err: err}
	}
	if err := fill(f, data); err != nil {
		d.root.Remove(name)
		return &Error{Path: d.display(name), Problem: problem(err), Err: err}
	}
	return nil
}

// create writes data to a new file whose name is prefix and a random
// suffix, created exclusively, and returns its name.
func (d *OutDir) create(prefix string, data []byte, perm fs.FileMode) (string, error) {
	for range 16 {
		var r [8]byte
		rand.Read(r[:])
		name := prefix + hex.EncodeToString(r[:])
		f, err := d.root.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, perm)
		if errors.Is(err, fs.ErrExist) {
			continue
		}
		if err != nil {
			return "", &Error{Path: d.display(name), Problem: problem(err), Err: err}
		}
		if err := fill(f, data); err != nil {
			d.root.Remove(name)
			return "", &Error{Path: d.display(name), Problem: problem(err), Err: err}
		}
		return name, nil
	}
	return "", &Error{Path: d.display(prefix + "*"), Problem: "no free temporary name"}
}

// testHookBeforeRename lets a test plant a link after the check.
var testHookBeforeRename func(name string)

// fill writes data to f and closes it.
func fill(f *os.File, data []byte) error {
	_, err := f.Write(data)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// Remove removes the file name inside d (never what a link names).
func (d *OutDir) Remove(name string) error {
	if err := d.check(name); err != nil {
		return err
	}
	if err := d.root.Remove(name); err != nil {
		return &Error{Path: d.display(name), Problem: problem(err), Err: err}
	}
	return nil
}

// ReadDir lists the folder name inside d ("." for d itself); a missing
// folder lists as empty.
func (d *OutDir) ReadDir(name string) ([]fs.DirEntry, error) {
	ents, err := fs.ReadDir(d.root.FS(), name)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, &Error{Path: d.display(name), Problem: problem(err), Err: err}
	}
	return ents, nil
}

// writable refuses to replace anything but a regular file.
func writable(name string, st fs.FileInfo) error {
	if st.Mode().IsRegular() {
		return nil
	}
	if st.Mode()&fs.ModeSymlink != 0 {
		return &Error{Path: name, Problem: "a symbolic link: output files are never written through a link (remove it, or write elsewhere)"}
	}
	err := regular(name, st).(*Error)
	err.Problem += "; it is not replaced"
	return err
}

// WriteFile writes data to the file at path as OutDir.WriteFile does,
// in the folder filepath.Dir(path), which it creates if need be.
func WriteFile(path string, data []byte, perm fs.FileMode) error {
	return inDir(path, func(d *OutDir, name string) error { return d.WriteFile(name, data, perm) })
}

// CreateFile writes data to the new file at path as OutDir.CreateFile
// does, in the folder filepath.Dir(path), which it creates if need be.
func CreateFile(path string, data []byte, perm fs.FileMode) error {
	return inDir(path, func(d *OutDir, name string) error { return d.CreateFile(name, data, perm) })
}

func inDir(p string, f func(*OutDir, string) error) error {
	dir, name := filepath.Split(filepath.Clean(p))
	if dir == "" {
		dir = "."
	}
	if name == "" || name == "." || name == ".." || name == string(filepath.Separator) {
		return &Error{Path: p, Problem: "not a file name"}
	}
	d, err := OpenOutDir(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	if err := f(d, name); err != nil {
		// Name the file as the caller spelled it.
		var e *Error
		if errors.As(err, &e) {
			return &Error{Path: p, Problem: e.Problem, Err: e.Err}
		}
		return err
	}
	return nil
}
