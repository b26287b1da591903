//go:build unix

package gitstore

import (
	"fmt"
	"os"
	"syscall"

	"github.com/readproof/readproof/internal/hint"
	"github.com/readproof/readproof/internal/text"
)

// foreignOwner is, when root is about to write into the private store at
// gitDir and another user owns it, the warning to give: the files root
// writes belong to root (0600 and 0400), and that user can no longer read
// or write them. nil otherwise: a user other than root cannot write into a
// private store it does not own. (A shared store, whose group modes serve
// every member, is not asked about: Update checks core.sharedRepository.)
func foreignOwner(gitDir string) error {
	if os.Geteuid() != 0 {
		return nil
	}
	fi, err := os.Stat(gitDir)
	if err != nil {
		return nil
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok || st.Uid == 0 {
		return nil
	}
	return hint.With(fmt.Errorf("running as root in a store that uid %d owns: the files this command writes belong to root, and uid %d may not be able to read or write them", st.Uid, st.Uid),
		fmt.Sprintf("run readproof as the store's owner (sudo -u '#%d' readproof ...); to give the files back: chown -R %d:%d %s", st.Uid, st.Uid, st.Gid, text.ShellArg(gitDir)))
}
