package gitstore

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestReadBlobsCheckLoosePackedToo: with CheckLoose, a blob that is packed
// and also has a loose file gets CheckLooseObject's error when the loose
// file is corrupt, as Blob then CheckLooseObject give it (the reference
// ReadBlobs promises), however many workers read.
func TestReadBlobsCheckLoosePackedToo(t *testing.T) {
	t.Parallel()
	s := NewTestStore(t)
	ids := putBlobs(t, s, 8, func(i int) string { return fmt.Sprintf("document %d\n", i) })
	path := s.Path()
	flipped := ids[3]
	loose := filepath.Join(path, "objects", string(flipped[:2]), string(flipped[2:]))
	if _, err := os.Stat(loose); err != nil {
		t.Skipf("blobs are not loose here: %v", err)
	}
	// a pack of every object; the loose files stay (no -d)
	cmd := exec.Command("git", "--git-dir", path, "pack-objects", "-q", filepath.Join(path, "objects", "pack", "pack"))
	cmd.Stdin = strings.NewReader(strings.Join(oidStrings(ids), "\n") + "\n")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("git pack-objects: %v\n%s", err, out)
	}
	raw, err := os.ReadFile(loose)
	if err != nil {
		t.Fatal(err)
	}
	raw[len(raw)-1] ^= 1 // the Adler-32 checksum
	rewriteLoose(t, path, flipped, raw)

	if out, err := exec.Command("git", "--git-dir", path, "count-objects", "-v").Output(); err != nil || !strings.Contains(string(out), "in-pack: 8\n") {
		t.Fatalf("git count-objects: %v\n%s", err, out)
	}
	st, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if _, err := st.Blob(flipped); err != nil {
		t.Fatalf("Blob: %v", err)
	}
	checkErr := CheckLooseObject(path, flipped)
	if !errors.Is(checkErr, ErrCorrupt) {
		t.Fatalf("CheckLooseObject of a flipped checksum: %v", checkErr)
	}
	for _, workers := range []int{1, 2} {
		for _, checked := range []bool{false, true} {
			_, errs := readAll(t, st, ids, BlobsOptions{Workers: workers, ContentChecked: checked, CheckLoose: true})
			if errs[3] != checkErr.Error() {
				t.Errorf("workers %d ContentChecked %v: error %q, want CheckLooseObject's %q", workers, checked, errs[3], checkErr)
			}
		}
	}
}

func oidStrings(ids []OID) []string {
	out := make([]string, len(ids))
	for i, id := range ids {
		out[i] = string(id)
	}
	return out
}
