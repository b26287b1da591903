//go:build !linux

package policy

import (
	"os"
	"time"
)

// fileStamp is the policy file's stat line; on this system there is none,
// and every cached load hashes the file.
func fileStamp(os.FileInfo) (string, time.Time, bool) { return "", time.Time{}, false }
