//go:build unix

package safeio

import "syscall"

// openFlags keep the open from blocking on a named pipe that slipped in
// between the check and the open (the fstat that follows refuses it);
// they do not change reads of a regular file.
const openFlags = syscall.O_NONBLOCK | syscall.O_NOCTTY
