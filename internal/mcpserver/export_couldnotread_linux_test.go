package mcpserver_test

import (
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/readproof/readproof/gitstore"
)

// TestEvidenceExportCouldNotReadTool (session 26): the
// readproof_evidence_export tool stops, as the command does, when the store
// refuses a read, and says so: could not read the store, with the hint
// about the read, not a refusal as forged. The permission tests make an
// object unreadable with its mode, which does not stop root, so they run the
// command as nobody; the tool runs in this process. Here the object's file
// is a Unix socket instead (mknod): open(2) of a socket fails with ENXIO
// for root too, an error store.CouldNotRead counts, so the test runs the
// same as root and as a user. Two objects: a receipt's blob, which only
// the receipts store check reads (store.ExportCouldNotRead), and the
// manifest's content tree, which the replay reads first (the error of
// ExportEvidenceChecked). `evidence export --json` of each prints the
// object that says could_not_read, exit 4.
func TestEvidenceExportCouldNotReadTool(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("needs git")
	}
	p := demoProject(t)
	p.cli(t, "run", "--id", "run-a", refundsURI)
	key := filepath.Join(p.home, "receipts.key")
	p.cli(t, "receipts", "key", "init", "--key", key)
	p.extra = append(p.extra, "READPROOF_RECEIPTS_KEY="+key)
	p.write(t, "args.json", `{"q": "refunds"}`)
	p.write(t, "result.txt", "30 days\n")
	receipt := strings.TrimSpace(p.cli(t, "receipts", "issue", "--session", "s1", "--run", "run-a", "--tool", "search",
		"--args-json", filepath.Join(p.dir, "args.json"), "--result", filepath.Join(p.dir, "result.txt")))
	if err := gitstore.UnpackForTest(p.store); err != nil {
		t.Fatal(err)
	}
	var blob string
	for _, line := range strings.Split(gitOut(t, p, "", "ls-tree", "-r", "refs/heads/readproof/receipts/sessions/s1"), "\n") {
		if meta, path, ok := strings.Cut(line, "\t"); ok && strings.HasSuffix(path, receipt+".json") {
			blob = meta[strings.LastIndexByte(meta, ' ')+1:]
		}
	}
	if blob == "" {
		t.Fatalf("no blob of receipt %q in session s1's tree", receipt)
	}
	tree := gitOut(t, p, "", "rev-parse", "refs/tags/readproof/runs/run-a^{tree}:content")
	s := p.serve(t)
	res := s.call(t, "readproof_evidence_export", map[string]any{"target": "run-a"})
	if res.IsError {
		t.Fatalf("export before any object was made a socket: %s", text(res))
	}

	for _, c := range []struct {
		what, object string
		want         []string
		checks       int // how many checks the --json object names
	}{
		{"a receipt's blob", blob, []string{"store check receipts: receipt " + receipt + " of session s1 cannot be read"}, 1},
		{"the content tree", tree, []string{"replay of entry 0 (" + refundsURI + ")"}, 0},
	} {
		restore := socketFor(t, p.store, c.object)
		msg := s.fail(t, "readproof_evidence_export", map[string]any{"target": "run-a"})
		mustContain(t, c.what, msg, append([]string{"evidence export run-a: could not read the store: run run-a, manifest ", "no such device or address",
			"nothing was written: this says nothing of the record, which was not read",
			// what stands there, not a damaged object or a failing file system (revA)
			"the object's file is a socket, not a regular file", "a file of the store is not a regular file"}, c.want...)...)
		for _, not := range []string{"refused", "forged", "did not write", "corrupt", "git fsck", "dmesg"} {
			if strings.Contains(msg, not) {
				t.Errorf("%s: the tool's error says %q, as of a forged record:\n%s", c.what, not, msg)
			}
		}

		out, errOut, err := p.run("--json", "evidence", "export", "run-a", "--out", filepath.Join(p.dir, "b.json"))
		var ee *exec.ExitError
		if !errors.As(err, &ee) || ee.ExitCode() != 4 {
			t.Errorf("%s: evidence export --json: %v, want exit 4\n%s", c.what, err, errOut)
		}
		var j struct {
			OK      bool   `json:"ok"`
			Stopped string `json:"stopped"`
			Error   string `json:"error"`
			Hint    string `json:"hint"`
			Checks  []struct {
				Name string `json:"name"`
				Kind string `json:"kind"`
			} `json:"checks"`
		}
		if err := json.Unmarshal([]byte(out), &j); err != nil {
			t.Fatalf("%s: evidence export --json: stdout is not one object: %v\n%s", c.what, err, out)
		}
		if j.OK || j.Stopped != "could_not_read" || !strings.Contains(j.Error, c.want[0]) || !strings.Contains(errOut, j.Error) ||
			!strings.Contains(j.Hint, "says nothing of the record") || len(j.Checks) != c.checks {
			t.Errorf("%s: evidence export --json printed %+v, want stopped could_not_read, the error and hint of stderr, %d checks\n%s", c.what, j, c.checks, errOut)
		}
		for _, ch := range j.Checks {
			if ch.Kind != "could_not_read" {
				t.Errorf("%s: evidence export --json: check %s has kind %q, want could_not_read", c.what, ch.Name, ch.Kind)
			}
		}
		if _, err := os.Stat(filepath.Join(p.dir, "b.json")); err == nil {
			t.Errorf("%s: evidence export that could not read the store wrote b.json", c.what)
		}
		restore()
	}
	if res := s.call(t, "readproof_evidence_export", map[string]any{"target": "run-a"}); res.IsError {
		t.Fatalf("export with every object back: %s", text(res))
	}
}

// socketFor puts a Unix socket where the loose object id of the store at
// gitDir is (as root may not open it either) and returns what puts the
// object back.
func socketFor(t *testing.T, gitDir, id string) (restore func()) {
	t.Helper()
	return specialFor(t, gitDir, id, syscall.S_IFSOCK)
}

// specialFor puts a file of type kind (syscall.S_IFSOCK, S_IFIFO) where
// the loose object id of the store at gitDir is and returns what puts the
// object back.
func specialFor(t *testing.T, gitDir, id string, kind uint32) (restore func()) {
	t.Helper()
	path := filepath.Join(gitDir, "objects", id[:2], id[2:])
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mknod(path, kind|0o444, 0); err != nil {
		t.Skipf("mknod of a file of type %#o: %v", kind, err)
	}
	return func() {
		t.Helper()
		if err := os.Remove(path); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, data, 0o444); err != nil {
			t.Fatal(err)
		}
	}
}

// TestEvidenceVerifyNotRegularFile (session 26, revA): `evidence verify`
// of a bundle against a store whose manifest content tree is a Unix socket
// (ENXIO on open, for root too) could not check, exit 4, and its hint says
// what happened, a file of the store that is not a regular file, not a
// failing file system ("dmesg may say why"). `readproof verify` of the
// store could not check it either, exit 4 (before revA: a broken, corrupt
// tree, exit 3).
func TestEvidenceVerifyNotRegularFile(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("needs git")
	}
	p := demoProject(t)
	p.cli(t, "run", "--id", "run-a", refundsURI)
	bundle := filepath.Join(p.dir, "a.json")
	p.cli(t, "evidence", "export", "run-a", "--out", bundle)
	if err := gitstore.UnpackForTest(p.store); err != nil {
		t.Fatal(err)
	}
	tree := gitOut(t, p, "", "rev-parse", "refs/tags/readproof/runs/run-a^{tree}:content")
	restore := socketFor(t, p.store, tree)
	out, errOut, err := p.run("evidence", "verify", bundle)
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 4 {
		t.Errorf("evidence verify: %v, want exit 4\n%s%s", err, out, errOut)
	}
	mustContain(t, "evidence verify", out, "the object's file is a socket, not a regular file")
	mustContain(t, "evidence verify", errOut, "readproof: hint: the store could not be read, which says nothing of the bundle or the record: a file of the store is not a regular file")
	if strings.Contains(errOut, "dmesg") {
		t.Errorf("evidence verify: the hint blames the file system:\n%s", errOut)
	}
	// the store check too: could not check, exit 4, not a broken
	// (corrupt) tree, exit 3
	out, errOut, err = p.run("verify")
	if !errors.As(err, &ee) || ee.ExitCode() != 4 {
		t.Errorf("verify: %v, want exit 4\n%s%s", err, out, errOut)
	}
	mustContain(t, "verify", out, "could-not-check: run run-a: object "+tree, "the object's file is a socket, not a regular file")
	if strings.Contains(out, "broken") || strings.Contains(out, "corrupt") {
		t.Errorf("verify calls the tree damaged:\n%s", out)
	}
	restore()
	if out, errOut, err := p.run("evidence", "verify", bundle); err != nil {
		t.Errorf("evidence verify with the object back: %v\n%s%s", err, out, errOut)
	}
}

// TestEvidenceExportFIFOObject (session 26, revA): a FIFO where the
// manifest's content tree should be opens (readproof opens without
// blocking) and reads as nothing; before revA that was a corrupt object and
// the export was refused as forged, exit 3. It was not read: `evidence
// export` stops as for a socket, could not read the store, exit 4, nothing
// written, and the tool says the same.
func TestEvidenceExportFIFOObject(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("needs git")
	}
	p := demoProject(t)
	p.cli(t, "run", "--id", "run-a", refundsURI)
	if err := gitstore.UnpackForTest(p.store); err != nil {
		t.Fatal(err)
	}
	specialFor(t, p.store, gitOut(t, p, "", "rev-parse", "refs/tags/readproof/runs/run-a^{tree}:content"), syscall.S_IFIFO)
	out := filepath.Join(p.dir, "b.json")
	stdout, errOut, err := p.run("evidence", "export", "run-a", "--out", out)
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 4 {
		t.Errorf("evidence export: %v, want exit 4\n%s", err, errOut)
	}
	want := []string{"evidence export run-a: could not read the store: run run-a, manifest ", "it is a named pipe, so the object could not be read",
		"a file of the store is not a regular file"}
	mustContain(t, "evidence export", errOut, want...)
	for _, not := range []string{"refused", "corrupt", "git fsck", "dmesg"} {
		if strings.Contains(errOut, not) {
			t.Errorf("evidence export says %q of a FIFO:\n%s", not, errOut)
		}
	}
	if stdout != "" {
		t.Errorf("evidence export printed %q", stdout)
	}
	if _, err := os.Stat(out); err == nil {
		t.Error("evidence export that could not read the store wrote b.json")
	}
	msg := p.serve(t).fail(t, "readproof_evidence_export", map[string]any{"target": "run-a"})
	mustContain(t, "the tool", msg, want...)
}
