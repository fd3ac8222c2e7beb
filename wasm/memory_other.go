//go:build !unix

package wasm

import "errors"

const canReserve = false

func reserve(uint64) ([]byte, error)      { return nil, errors.New("not supported") }
func commit(b []byte, from, to int) error { return errors.New("not supported") }
func unreserve([]byte)                    {}
