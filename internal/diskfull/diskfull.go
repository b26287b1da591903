// Package diskfull tells whether a write failed because the file system is
// full or the user's quota is used up, on every platform readproof builds
// for: ENOSPC and EDQUOT where they exist, and Windows' own codes for a full
// disk, which errors.Is(err, syscall.ENOSPC) does not match there.
//
// diskfull imports only the standard library.
package diskfull

import (
	"errors"
	"syscall"
)

// Is reports whether err, or an error it wraps, says the disk (or the
// quota) is full.
func Is(err error) bool {
	if err == nil {
		return false
	}
	if errors.Is(err, syscall.ENOSPC) || errors.Is(err, syscall.EDQUOT) {
		return true
	}
	for _, code := range platformCodes {
		if errors.Is(err, code) {
			return true
		}
	}
	return false
}
