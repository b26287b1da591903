//go:build !linux

package policy

import (
	"os"
	"time"
)

// fileStamp is the policy file's stat line; on this system there is none,
// and every cached load hashes the file.
func fileStamp(os.FileInfo) (string, time.Time, bool) { return "", time.Time{}, false }

// fsType and keepsCtime: no file system's stat line is used here.
func fsType(*os.File, string) (uint32, bool) { return 0, false }

func keepsCtime(uint32) bool { return false }
