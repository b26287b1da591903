package gitstore

import (
	"context"
	"os"
	"path/filepath"
	"testing"
)

// TestMirrorFetchRemovesKilledReceive: the pack a fetch receives is
// spooled to a file in the mirror (receivePack); a fetch killed while it
// did so (SIGKILL, the OOM killer, a power cut) left that file, as large
// as the pack, in the cache for good. The next fetch, which holds the
// mirror's lock, removes it.
func TestMirrorFetchRemovesKilledReceive(t *testing.T) {
	t.Parallel()
	up := upstream(t)
	m := fetched(t, t.TempDir(), up)
	left := filepath.Join(m.Dir(), "tmp_pack_received_1234")
	if err := os.WriteFile(left, []byte("PACK part of a killed fetch"), 0o600); err != nil {
		t.Fatal(err)
	}
	commitFile(t, up, "doc.md", "v2\n")
	if err := m.Fetch(context.Background()); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Lstat(left); err == nil {
		t.Errorf("the next fetch left %s, the pack a killed fetch was receiving", filepath.Base(left))
	}
	if got, _, _, err := m.ResolveFile("", "doc.md", 1<<20); err != nil || string(got) != "v2\n" {
		t.Fatalf("ResolveFile = %q, %v", got, err)
	}
}
