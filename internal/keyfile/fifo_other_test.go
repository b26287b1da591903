//go:build !unix

package keyfile_test

import "errors"

func mkfifo(string, uint32) error { return errors.New("no FIFOs on this system") }
