//go:build unix

package mcpauth

import (
	"fmt"
	"os"
	"syscall"
)

// ownerOf is the uid owning fi, -1 when the system does not say.
func ownerOf(fi os.FileInfo) int64 {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return int64(st.Uid)
	}
	return -1
}

// checkOwner refuses a token file another user owns: whoever owns it can
// write it, and so could issue tokens for the server that reads it. Mode
// 0600 says nothing about whose the file is.
func checkOwner(path string, fi os.FileInfo) error {
	uid, me := ownerOf(fi), int64(os.Geteuid())
	if uid < 0 || uid == me {
		return nil
	}
	return fmt.Errorf("%w: %s is owned by uid %d, not by uid %d that runs readproof, and whoever owns it could issue tokens for this server: "+
		"make it yours (chown %d %s) or use a token file of your own (--tokens)", ErrOwner, path, uid, me, me, path)
}
