//go:build !unix

package gitstore

import "os"

// holdFlock takes no lock here: there is no flock. While the holder keeps
// its lock file open (until its content is durable, makeDurable), Windows
// refuses to rename or remove it (Go opens files without
// FILE_SHARE_DELETE), so no breaker takes it then; the holder must close
// it before its own rename.
func holdFlock(*os.File) (held, busy bool) { return false, false }

// lockHolder cannot tell here: a lock older than the stale-lock age is
// taken for a crashed process's, as before session 28.
func lockHolder(string, os.FileInfo) (holderState, func()) { return holderGone, func() {} }
