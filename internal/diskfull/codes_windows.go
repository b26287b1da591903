package diskfull

import "syscall"

// platformCodes: ERROR_HANDLE_DISK_FULL (39) and ERROR_DISK_FULL (112),
// what a write to a full volume returns on Windows.
var platformCodes = []syscall.Errno{39, 112}
