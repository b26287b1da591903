package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestEvidenceCouldNotRead (session 25): a store check of `evidence export`
// that could not read the store (here the manifest commit's content tree,
// a loose object the user may not read; the replay reads it too, and since
// session 25, revA, the export stops there, with the same exit and hint:
// TestExportCouldNotRead holds the store checks' decision) refused the export as forged, exit 3, with the hint to restore the run
// from a clone; `evidence verify` failed with the hint of a re-rooted
// forgery. Neither had learnt anything of the record. Both now exit 4 with
// a hint about the read; the same object damaged (readable, not a zlib
// stream) is still refused as damaged or forged, exit 3. Permission bits do
// not stop root, so as root the commands run as the user nobody (setpriv),
// as in TestStorePermissionMessages.
func TestEvidenceCouldNotRead(t *testing.T) {
	t.Parallel()
	requireGit(t)
	asUser, root, bin := permissionSandbox(t, "readproof-evperm-")
	proj := filepath.Join(root, "proj")
	if err := os.MkdirAll(proj, 0o755); err != nil {
		t.Fatal(err)
	}
	files := map[string]string{
		"readproof.toml": "version = 1\n\n[[resource]]\nuri = \"readproof://demo/doc\"\nsource = { type = \"filesystem\", path = \"doc.md\" }\n",
		"doc.md":         "Products can be refunded within 30 days.\n",
	}
	for name, data := range files {
		if err := os.WriteFile(filepath.Join(proj, name), []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	run := permRunner(t, asUser, root, bin, proj)
	for _, args := range [][]string{{"init"}, {"run", "--id", "r1", "readproof://demo/doc"}, {"evidence", "export", "r1", "--out", "a.json"}} {
		if out, code := run(false, args...); code != 0 {
			t.Fatalf("readproof %s: exit %d\n%s", strings.Join(args, " "), code, out)
		}
	}
	store := filepath.Join(proj, ".readproof")
	git := func(stdin string, args ...string) string {
		t.Helper()
		cmd := exec.Command("git", append([]string{"--git-dir", store}, args...)...)
		if stdin != "" {
			f, err := os.Open(stdin)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			cmd.Stdin = f
		}
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		return strings.TrimSpace(string(out))
	}
	// every object loose, so that one can be made unreadable alone
	packs, _ := filepath.Glob(filepath.Join(store, "objects", "pack", "pack-*.pack"))
	for _, p := range packs {
		aside := filepath.Join(root, filepath.Base(p))
		if err := os.Rename(p, aside); err != nil {
			t.Fatal(err)
		}
		os.Remove(strings.TrimSuffix(p, ".pack") + ".idx")
		git(aside, "unpack-objects", "-q")
	}
	tree := git("", "rev-parse", "refs/tags/readproof/runs/r1^{tree}:content")
	object := filepath.Join(store, "objects", tree[:2], tree[2:])
	if os.Geteuid() == 0 {
		filepath.Walk(root, func(p string, _ os.FileInfo, _ error) error {
			if p == bin {
				return nil
			}
			return os.Lchown(p, 65534, 65534)
		})
	}
	if err := os.Chmod(object, 0); err != nil {
		t.Fatal(err)
	}

	out, code := run(true, "evidence", "export", "r1", "--out", "b.json")
	if code != 4 || !strings.Contains(out, "readproof: error: evidence export r1: could not read the store: run r1, manifest ") || !strings.Contains(out, "permission denied") {
		t.Errorf("evidence export of a store with an unreadable object: exit %d, want 4 naming the read and \"permission denied\"\n%s", code, out)
	}
	if h := hintLine(out); !strings.Contains(h, "owner and mode") || strings.Contains(h, "forged") || strings.Contains(h, "restore") {
		t.Errorf("evidence export of a store with an unreadable object: the hint should be about the read, not a forgery:\n%s", out)
	}
	if _, err := os.Stat(filepath.Join(proj, "b.json")); err == nil {
		t.Errorf("evidence export that could not read the store wrote b.json")
	}
	out, code = run(true, "evidence", "verify", "a.json")
	if code != 4 || !strings.Contains(out, "FAIL store_manifest reading manifest commit ") || !strings.Contains(out, "permission denied") {
		t.Errorf("evidence verify against a store with an unreadable object: exit %d, want 4 and the failing check\n%s", code, out)
	}
	if h := hintLine(out); !strings.Contains(h, "the store could not be read") || strings.Contains(h, "forgery") {
		t.Errorf("evidence verify against a store with an unreadable object: the hint should be about the read, not a forgery:\n%s", out)
	}
	// --json marks each check that could not read (session 25,
	// verifyedges): here every failed one, the replay's too, as exit 4 says
	kinds := failedKinds(t, run, "a.json")
	if _, ok := kinds["store_manifest"]; !ok {
		t.Errorf("evidence verify --json against a store with an unreadable object: failed checks' kinds %v, want store_manifest among them", kinds)
	}
	for name, kind := range kinds {
		if kind != "could_not_read" {
			t.Errorf("evidence verify --json against a store with an unreadable object: failed check %s has kind %q, want could_not_read (all: %v)", name, kind, kinds)
		}
	}

	// session 25 (revA): an entry's blob the user may not read, which the
	// replay reads, wrote a bundle recording replay.all_match false, exit 0,
	// with the hint to restore damage (with --with-content: exit 1, "the
	// store lost the bytes"); the export now stops, as verify does, exit 4
	if err := os.Chmod(object, 0o444); err != nil {
		t.Fatal(err)
	}
	doc := git("", "rev-parse", "refs/tags/readproof/runs/r1^{tree}:content/demo/doc")
	blob := filepath.Join(store, "objects", doc[:2], doc[2:])
	if err := os.Chmod(blob, 0); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{{"evidence", "export", "r1", "--out", "b.json"}, {"evidence", "export", "r1", "--with-content", "--out", "b.json"}} {
		out, code := run(true, args...)
		if code != 4 || !strings.Contains(out, "readproof: error: evidence export r1: could not read the store: run r1, manifest ") || !strings.Contains(out, "replay of entry 0 (readproof://demo/doc)") || !strings.Contains(out, "permission denied") {
			t.Errorf("readproof %s of a store with an unreadable blob: exit %d, want 4 naming the replay's read\n%s", strings.Join(args, " "), code, out)
		}
		if h := hintLine(out); !strings.Contains(h, "owner and mode") || strings.Contains(h, "restore") || strings.Contains(h, "lost") {
			t.Errorf("readproof %s of a store with an unreadable blob: the hint should be about the read, not damage:\n%s", strings.Join(args, " "), out)
		}
		if _, err := os.Stat(filepath.Join(proj, "b.json")); err == nil {
			t.Errorf("readproof %s that could not read the store wrote b.json", strings.Join(args, " "))
		}
	}
	if err := os.Chmod(blob, 0o444); err != nil {
		t.Fatal(err)
	}

	// the same object damaged: what was read is wrong, exit 3
	if err := os.Chmod(object, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(object, []byte("not a zlib stream"), 0o444); err != nil {
		t.Fatal(err)
	}
	out, code = run(true, "evidence", "export", "r1", "--out", "b.json")
	if code != 3 || !strings.Contains(out, "refused") {
		t.Errorf("evidence export of a store with a damaged object: exit %d, want 3 (refused)\n%s", code, out)
	}
	out, code = run(true, "evidence", "verify", "a.json")
	if code != 3 {
		t.Errorf("evidence verify against a store with a damaged object: exit %d, want 3\n%s", code, out)
	}
	if kinds := failedKinds(t, run, "a.json"); len(kinds) == 0 || kinds["store_manifest"] == "could_not_read" {
		t.Errorf("evidence verify --json against a store with a damaged object: failed checks' kinds %v, want store_manifest failed, not could_not_read", kinds)
	}
}

// failedKinds runs `evidence verify bundle --json` as the user and returns
// the kind of each failed check by name ("" for none).
func failedKinds(t *testing.T, run func(bool, ...string) (string, int), bundle string) map[string]string {
	t.Helper()
	out, _ := run(true, "evidence", "verify", bundle, "--json")
	var j struct {
		Checks []struct {
			Name string `json:"name"`
			OK   bool   `json:"ok"`
			Kind string `json:"kind"`
		} `json:"checks"`
	}
	// stdout and stderr are combined: the JSON object is the first line
	// that opens one through the line that closes it
	start, end := strings.Index(out, "{\n"), strings.LastIndex(out, "\n}")
	if start < 0 || end < start {
		t.Fatalf("evidence verify --json printed no object:\n%s", out)
	}
	if err := json.Unmarshal([]byte(out[start:end+2]), &j); err != nil {
		t.Fatalf("evidence verify --json: %v\n%s", err, out)
	}
	kinds := map[string]string{}
	for _, c := range j.Checks {
		if !c.OK {
			kinds[c.Name] = c.Kind
		}
	}
	return kinds
}
