package gitstore

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
)

// TestFailedInitRemovesParentsItMade: an init into a missing nested path
// that fails (here its fill) leaves none of the directories it made above
// the store; one that was there before stays.
func TestFailedInitRemovesParentsItMade(t *testing.T) {
	t.Parallel()
	top := t.TempDir()
	refuse := func(Store) error { return errors.New("refused") }
	if _, err := InitWith(filepath.Join(top, "x", "y", "store"), Options{}, refuse); err == nil {
		t.Fatal("InitWith succeeded though fill failed")
	}
	if _, err := os.Lstat(filepath.Join(top, "x")); !os.IsNotExist(err) {
		t.Errorf("a failed init left %s (%v)", filepath.Join(top, "x"), err)
	}
	if _, err := InitWith(filepath.Join(top, "store"), Options{}, refuse); err == nil {
		t.Fatal("InitWith succeeded though fill failed")
	}
	if fi, err := os.Stat(top); err != nil || !fi.IsDir() {
		t.Errorf("a failed init removed %s, which was there before it: %v", top, err)
	}
}
