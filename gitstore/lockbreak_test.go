package gitstore

import (
	"fmt"
	"os"
)

// helperOneUpdate moves ref one commit on from its tip by compare-and-swap
// and prints "ok <id>", or "failed <id>" and the error. With pause set it
// stops itself (SIGSTOP, where there is one) just before it renames its
// lock into place: beforeRename.
func helperOneUpdate(path, ref string, opts Options, pause bool) error {
	s, err := OpenWithOptions(path, opts)
	if err != nil {
		return err
	}
	defer s.Close()
	tip, err := s.Ref(ref)
	if err != nil {
		return err
	}
	empty, err := s.PutTree(nil)
	if err != nil {
		return err
	}
	c, err := s.PutCommit(Commit{Tree: empty, Parents: []OID{tip}, Author: testSig(), Committer: testSig(),
		Message: fmt.Sprintf("one update by pid %d\n", os.Getpid())})
	if err != nil {
		return err
	}
	if pause {
		beforeRename = stopBeforeRename
	}
	if err := s.Update(RefUpdate{Name: ref, Old: tip, New: c}); err != nil {
		fmt.Println("failed", c)
		return err
	}
	fmt.Println("ok", c)
	return nil
}
