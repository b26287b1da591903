//go:build unix

package store

import (
	"os"
	"syscall"
	"testing"
	"time"

	"github.com/readproof/readproof/gitstore"
)

// TestViewDocsNotAFile: a FIFO at the document index's name (planted in
// the store) is no index: the next write behind the future run rebuilds
// it without blocking. Before, the write's open of the FIFO blocked for
// good. (A link to a device, /dev/zero, is refused by the same check; not
// run here, since before the fix it reads without end.)
func TestViewDocsNotAFile(t *testing.T) {
	for _, tc := range []struct {
		name  string
		plant func(path string) error
	}{
		{"fifo", func(p string) error { return syscall.Mkfifo(p, 0o600) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h, tip := viewDocsSetup(t)
			if err := os.Remove(h.docsPath()); err != nil {
				t.Fatal(err)
			}
			if err := tc.plant(h.docsPath()); err != nil {
				t.Skip(err)
			}
			m, mf := h.run("l4", 5, "readproof://demo/d=l4", "readproof://demo/h=l4")
			done := make(chan gitstore.OID, 1)
			go func() {
				j, err := h.s.journalOn(tip, "x", m, mf)
				if err != nil {
					t.Error(err)
				}
				done <- j
			}()
			select {
			case j := <-done:
				h.checkView(j, "after a "+tc.name+" at the index's name")
			case <-time.After(10 * time.Second):
				t.Fatalf("the write behind a future run has not finished after 10 s with a %s at %s", tc.name, ViewDocsFile)
			}
		})
	}
}
