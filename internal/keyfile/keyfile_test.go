package keyfile_test

import (
	"bytes"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/readproof/readproof/evidence"
	"github.com/readproof/readproof/internal/keyfile"
	"github.com/readproof/readproof/probe"
	"github.com/readproof/readproof/receipts"
)

// kind is one key kind as its package exposes it.
type kind struct {
	name   string
	create func(path string, forbidden ...string) error
	load   func(path string, forbidden ...string) error
	// valid returns the bytes of a well-formed key file of this kind.
	valid func(t *testing.T) []byte
	// sentinel errors the kind's package promises per refusal.
	location, mode, invalid, exists error
}

func kinds() []kind {
	return []kind{
		{
			name: "signing",
			create: func(p string, f ...string) error {
				_, err := evidence.CreateKey(p, f...)
				return err
			},
			load: func(p string, f ...string) error {
				_, err := evidence.LoadKey(p, f...)
				return err
			},
			valid: func(t *testing.T) []byte {
				p := filepath.Join(t.TempDir(), "k")
				if _, err := evidence.CreateKey(p); err != nil {
					t.Fatal(err)
				}
				data, err := os.ReadFile(p)
				if err != nil {
					t.Fatal(err)
				}
				return data
			},
			location: evidence.ErrKeyLocation, mode: evidence.ErrKeyPermissions,
			invalid: evidence.ErrUnsupportedKey, exists: evidence.ErrKeyExists,
		},
		{
			name:   "receipts",
			create: receipts.CreateKey,
			load: func(p string, f ...string) error {
				_, err := receipts.LoadKey(p, f...)
				return err
			},
			valid:    func(*testing.T) []byte { return bytes.Repeat([]byte{7}, receipts.KeySize) },
			location: receipts.ErrKeyPath, mode: receipts.ErrKeyInsecure,
			invalid: receipts.ErrKeyFormat, exists: fs.ErrExist,
		},
		{
			name:   "probe",
			create: probe.CreateKeyFile,
			load: func(p string, f ...string) error {
				_, err := probe.LoadKeyFile(p, f...)
				return err
			},
			valid:    func(*testing.T) []byte { return []byte(strings.Repeat("ab", 32) + "\n") },
			location: probe.ErrKeyLocation, mode: probe.ErrKeyFile,
			invalid: probe.ErrKeyFile, exists: probe.ErrKeyExists,
		},
	}
}

// rotate is the probe's third writer; it obeys the same location policy.
func rotate(p string, f ...string) error { return probe.RotateKeyFile(p, f...) }

// layout is a fresh directory tree for one case.
type layout struct {
	root, store, project, outside, linkToStore, workTree, bare, linkToWorkTree string
}

func newLayout(t *testing.T) layout {
	t.Helper()
	root := t.TempDir()
	l := layout{
		root:           root,
		store:          filepath.Join(root, "store"),
		project:        filepath.Join(root, "project"),
		outside:        filepath.Join(root, "outside"),
		linkToStore:    filepath.Join(root, "outside", "store-link"),
		workTree:       filepath.Join(root, "work"),
		bare:           filepath.Join(root, "bare.git"),
		linkToWorkTree: filepath.Join(root, "outside", "work-link"),
	}
	for _, d := range []string{l.store, l.project, l.outside,
		filepath.Join(l.workTree, ".git", "objects"), filepath.Join(l.workTree, ".git", "refs"),
		filepath.Join(l.bare, "objects"), filepath.Join(l.bare, "refs")} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	for _, g := range []string{filepath.Join(l.workTree, ".git"), l.bare} {
		if err := os.WriteFile(filepath.Join(g, "HEAD"), []byte("ref: refs/heads/main\n"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink(l.store, l.linkToStore); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(l.workTree, l.linkToWorkTree); err != nil {
		t.Fatal(err)
	}
	return l
}

// TestPolicyEveryKind is the one table of key-file refusals: every key kind
// (signing, receipts, probe) against every refusal, for writing and, where
// it applies, for loading. A refused write must leave nothing behind.
func TestPolicyEveryKind(t *testing.T) {
	type refusal struct {
		name string
		// path returns the key path and the forbidden directories.
		path func(l layout) (string, []string)
		// prepare, when set, puts something at the path before loading.
		prepare func(t *testing.T, k kind, path string)
		write   bool // refused on create (and rotate)
		read    bool // refused on load
		want    func(k kind) []error
	}
	loc := func(k kind) []error { return []error{keyfile.ErrLocation, k.location} }
	placeValid := func(mode os.FileMode) func(t *testing.T, k kind, p string) {
		return func(t *testing.T, k kind, p string) {
			if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(p, k.valid(t), 0o600); err != nil {
				t.Fatal(err)
			}
			if err := os.Chmod(p, mode); err != nil {
				t.Fatal(err)
			}
		}
	}
	refusals := []refusal{
		{name: "empty path", path: func(l layout) (string, []string) { return "", nil },
			write: true, read: true, want: loc},
		{name: "inside the store", path: func(l layout) (string, []string) {
			return filepath.Join(l.store, "k"), []string{l.store, l.project}
		}, prepare: placeValid(0o600), write: true, read: true, want: loc},
		{name: "deep inside the project, directories missing", path: func(l layout) (string, []string) {
			return filepath.Join(l.project, "a", "b", "k"), []string{l.store, l.project}
		}, write: true, want: loc},
		{name: "into the store through a symlinked directory", path: func(l layout) (string, []string) {
			return filepath.Join(l.linkToStore, "k"), []string{l.store}
		}, prepare: placeValid(0o600), write: true, read: true, want: loc},
		{name: "forbidden directory named through a symlink", path: func(l layout) (string, []string) {
			return filepath.Join(l.store, "k"), []string{l.linkToStore}
		}, prepare: placeValid(0o600), write: true, read: true, want: loc},
		{name: "inside a git work tree", path: func(l layout) (string, []string) {
			return filepath.Join(l.workTree, "secrets", "k"), nil
		}, prepare: placeValid(0o600), write: true, read: true, want: loc},
		{name: "inside a git work tree through a symlink", path: func(l layout) (string, []string) {
			return filepath.Join(l.linkToWorkTree, "k"), nil
		}, prepare: placeValid(0o600), write: true, read: true, want: loc},
		{name: "inside a bare repository", path: func(l layout) (string, []string) {
			return filepath.Join(l.bare, "k"), nil
		}, prepare: placeValid(0o600), write: true, read: true, want: loc},
		{name: "readable by group", path: func(l layout) (string, []string) {
			return filepath.Join(l.outside, "k"), []string{l.store}
		}, prepare: placeValid(0o640), read: true,
			want: func(k kind) []error { return []error{keyfile.ErrMode, k.mode} }},
		{name: "readable by others", path: func(l layout) (string, []string) {
			return filepath.Join(l.outside, "k"), []string{l.store}
		}, prepare: placeValid(0o604), read: true,
			want: func(k kind) []error { return []error{keyfile.ErrMode, k.mode} }},
		{name: "writable by group", path: func(l layout) (string, []string) {
			return filepath.Join(l.outside, "k"), nil
		}, prepare: placeValid(0o620), read: true,
			want: func(k kind) []error { return []error{keyfile.ErrMode, k.mode} }},
		{name: "a directory", path: func(l layout) (string, []string) {
			return l.outside, nil
		}, read: true, want: func(k kind) []error { return []error{keyfile.ErrInvalid, k.invalid} }},
		{name: "a FIFO", path: func(l layout) (string, []string) {
			return filepath.Join(l.outside, "fifo"), nil
		}, prepare: func(t *testing.T, _ kind, p string) {
			if err := mkfifo(p, 0o600); err != nil {
				t.Skip("no FIFOs here:", err)
			}
		}, read: true, want: func(k kind) []error { return []error{keyfile.ErrInvalid, k.invalid} }},
		{name: "larger than any key", path: func(l layout) (string, []string) {
			return filepath.Join(l.outside, "big"), nil
		}, prepare: func(t *testing.T, _ kind, p string) {
			if err := os.WriteFile(p, bytes.Repeat([]byte("a"), 1<<17), 0o600); err != nil {
				t.Fatal(err)
			}
		}, read: true, want: func(k kind) []error { return []error{keyfile.ErrInvalid, k.invalid} }},
		{name: "missing", path: func(l layout) (string, []string) {
			return filepath.Join(l.outside, "none"), nil
		}, read: true, want: func(k kind) []error { return []error{fs.ErrNotExist} }},
		{name: "existing file on create", path: func(l layout) (string, []string) {
			return filepath.Join(l.outside, "k"), []string{l.store}
		}, prepare: placeValid(0o600), write: true,
			want: func(k kind) []error { return []error{keyfile.ErrExists, fs.ErrExist, k.exists} }},
	}
	for _, k := range kinds() {
		for _, r := range refusals {
			t.Run(k.name+"/"+r.name, func(t *testing.T) {
				check := func(op string, err error) {
					t.Helper()
					if err == nil {
						t.Fatalf("%s: accepted", op)
					}
					for _, w := range r.want(k) {
						if !errors.Is(err, w) {
							t.Errorf("%s: %v\ndoes not wrap %q", op, err, w)
						}
					}
				}
				if r.read {
					l := newLayout(t)
					p, forbidden := r.path(l)
					if r.prepare != nil {
						r.prepare(t, k, p)
					}
					check("load", k.load(p, forbidden...))
				}
				if r.write {
					writers := map[string]func(string, ...string) error{"create": k.create}
					if k.name == "probe" && r.name != "existing file on create" {
						writers["rotate"] = rotate
					}
					for op, write := range writers {
						l := newLayout(t)
						p, forbidden := r.path(l)
						var before []byte
						if r.prepare != nil && r.name == "existing file on create" {
							r.prepare(t, k, p)
							before, _ = os.ReadFile(p)
						}
						check(op, write(p, forbidden...))
						if p == "" {
							continue
						}
						after, err := os.ReadFile(p)
						switch {
						case before == nil && err == nil:
							t.Errorf("%s: refused but wrote %s", op, p)
						case before != nil && !bytes.Equal(before, after):
							t.Errorf("%s: refused but changed %s", op, p)
						}
						if left, _ := filepath.Glob(filepath.Join(filepath.Dir(p), ".readproof-key-*")); len(left) > 0 {
							t.Errorf("%s: temporary files left: %v", op, left)
						}
					}
				}
			})
		}
	}
}

// TestAcceptedEveryKind: outside every forbidden directory and repository,
// each kind creates a 0600 file and loads it back; a signing key's .pub is
// public (0644) and refuses nothing.
func TestAcceptedEveryKind(t *testing.T) {
	for _, k := range kinds() {
		t.Run(k.name, func(t *testing.T) {
			l := newLayout(t)
			p := filepath.Join(l.outside, "new", "k")
			if k.name == "receipts" { // receipts.CreateKey wants the directory to exist
				os.MkdirAll(filepath.Dir(p), 0o700)
			}
			if err := k.create(p, l.store, l.project); err != nil {
				t.Fatal(err)
			}
			fi, err := os.Stat(p)
			if err != nil || fi.Mode().Perm() != 0o600 {
				t.Fatalf("key file %v, %v; want mode 0600", fi, err)
			}
			if err := k.load(p, l.store, l.project); err != nil {
				t.Fatal(err)
			}
			if left, _ := filepath.Glob(filepath.Join(filepath.Dir(p), ".readproof-key-*")); len(left) > 0 {
				t.Errorf("temporary files left: %v", left)
			}
		})
	}
}

// TestWriteSweepsKilledWrites: writing a key removes, from the key's
// directory, the temporary key files a killed write left there (a regular
// file named .readproof-key- and digits, over a minute old), for every
// kind: killed after its link, such a file is a second name of a key, which
// a rotation would otherwise leave on disk. A young one (a write in
// progress), another name and a link by such a name are left alone.
func TestWriteSweepsKilledWrites(t *testing.T) {
	for _, k := range kinds() {
		t.Run(k.name, func(t *testing.T) {
			dir := t.TempDir()
			old := time.Now().Add(-time.Hour)
			put := func(name string, age bool) string {
				p := filepath.Join(dir, name)
				if err := os.WriteFile(p, []byte("secret\n"), 0o600); err != nil {
					t.Fatal(err)
				}
				if age {
					if err := os.Chtimes(p, old, old); err != nil {
						t.Fatal(err)
					}
				}
				return p
			}
			left := put(".readproof-key-123", true)
			young := put(".readproof-key-456", false)
			other := put(".readproof-key-12x", true)
			target := put("elsewhere", true)
			link := filepath.Join(dir, ".readproof-key-789")
			if err := os.Symlink(target, link); err != nil {
				t.Fatal(err)
			}
			if err := k.create(filepath.Join(dir, "k.key")); err != nil {
				t.Fatal(err)
			}
			if _, err := os.Lstat(left); !errors.Is(err, fs.ErrNotExist) {
				t.Fatalf("a killed write's temporary key file is left (%v)", err)
			}
			for _, p := range []string{young, other, link, target} {
				if _, err := os.Lstat(p); err != nil {
					t.Fatalf("%s was removed: %v", filepath.Base(p), err)
				}
			}
		})
	}
}
