//go:build !unix

package safeio

import "errors"

func mkfifo(string) error { return errors.New("no named pipes") }
