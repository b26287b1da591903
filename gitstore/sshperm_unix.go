//go:build unix

package gitstore

import (
	"fmt"
	"os"
	"syscall"
)

// sshConfigPermErr is, for ~/.ssh/config or a file an Include line reads,
// why ssh refuses it ("Bad owner or permissions"): others than its owner
// can write it (mode & 022), or it belongs to neither root nor this user.
// nil when ssh reads it.
func sshConfigPermErr(fi os.FileInfo) error {
	if m := fi.Mode().Perm(); m&0o022 != 0 {
		return fmt.Errorf("others than its owner can write it (mode %04o)", m)
	}
	if st, ok := fi.Sys().(*syscall.Stat_t); ok && st.Uid != 0 && int(st.Uid) != os.Getuid() {
		return fmt.Errorf("it belongs to uid %d, neither root nor this user (uid %d)", st.Uid, os.Getuid())
	}
	return nil
}
