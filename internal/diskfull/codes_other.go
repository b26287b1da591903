//go:build !windows

package diskfull

import "syscall"

// platformCodes: none beyond ENOSPC and EDQUOT.
var platformCodes []syscall.Errno
