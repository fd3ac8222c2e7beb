//go:build !unix

package results

import "errors"

func mkfifo(string) error { return errors.New("no named pipes") }
