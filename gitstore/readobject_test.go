package gitstore

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/go-git/go-git/v5/plumbing"
)

// directFixture is a store whose objects are partly packed by stock git
// (with deltas: similar documents and their history) and partly loose.
func directFixture(t *testing.T) (path string, objects map[string]string) {
	t.Helper()
	s := looseWrites(NewTestStore(t)) // the objects written after gc stay loose
	path = s.Path()
	base := strings.Repeat("the same paragraph of a policy, again and again\n", 200)
	var tip OID
	for i := 0; i < 25; i++ {
		if tip == "" {
			tip = mkCommit(t, s, base+fmt.Sprint(i))
		} else {
			tip = mkCommit(t, s, base+fmt.Sprint(i), tip)
		}
	}
	mustUpdate(t, s, RefUpdate{Name: "refs/heads/main", New: tip})
	if out, err := GitCommand(t, path, "gc", "--aggressive", "--prune=now", "--quiet").CombinedOutput(); err != nil {
		t.Fatalf("git gc: %v\n%s", err, out)
	}
	// and some loose objects after the pack
	old := tip
	tip = mkCommit(t, s, "written after gc", tip)
	mustUpdate(t, s, RefUpdate{Name: "refs/heads/main", Old: old, New: tip})
	if err := s.(*repo).Sync(); err != nil {
		t.Fatal(err)
	}
	objects = map[string]string{}
	for _, l := range strings.Split(strings.TrimSpace(git(t, path, "cat-file", "--batch-all-objects", "--batch-check=%(objectname) %(objecttype)")), "\n") {
		id, typ, _ := strings.Cut(l, " ")
		objects[id] = typ
	}
	return path, objects
}

// fromGit reads objects (id to type) with stock git: the bytes `git
// cat-file TYPE ID` prints, by id, read with one process.
func fromGit(t *testing.T, path string, objects map[string]string) map[string][]byte {
	t.Helper()
	ids := make([]OID, 0, len(objects))
	for id := range objects {
		ids = append(ids, OID(id))
	}
	want := make(map[string][]byte, len(ids))
	for i, o := range gitObjects(t, path, ids) {
		id := string(ids[i])
		if o.Kind != objects[id] {
			t.Fatalf("git cat-file --batch: %s is a %s, --batch-check said %s", id, o.Kind, objects[id])
		}
		want[id] = o.Data
	}
	return want
}

// TestReadObjectMatchesGit: readObject returns stock git's bytes for every
// object of a store holding loose objects and a pack with deltas.
func TestReadObjectMatchesGit(t *testing.T) {
	t.Parallel()
	path, objects := directFixture(t)
	st, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	r := st.(*repo)
	want := fromGit(t, path, objects)
	for id, typ := range objects {
		r.mu.Lock()
		o, full, err := r.readObject(OID(id))
		r.mu.Unlock()
		if err != nil || o.Type().String() != typ || !bytes.Equal(full, want[id]) {
			t.Fatalf("readObject(%s): %v", id, err)
		}
	}
}

// TestReadObjectDamagedPack: with a byte of the pack changed, every read
// gives git's bytes or an error, never other bytes.
func TestReadObjectDamagedPack(t *testing.T) {
	t.Parallel()
	path, objects := directFixture(t)
	packs, _ := filepath.Glob(filepath.Join(path, "objects", "pack", "*.pack"))
	if len(packs) != 1 {
		t.Fatalf("packs: %v", packs)
	}
	want := fromGit(t, path, objects)
	data, err := os.ReadFile(packs[0])
	if err != nil {
		t.Fatal(err)
	}
	for _, at := range []int{len(data) / 3, len(data) / 2, 2 * len(data) / 3} {
		damaged := append([]byte(nil), data...)
		damaged[at] ^= 0x5a
		os.Chmod(packs[0], 0o644)
		if err := os.WriteFile(packs[0], damaged, 0o644); err != nil {
			t.Fatal(err)
		}
		st, err := Open(path)
		if err != nil {
			t.Fatal(err)
		}
		r := st.(*repo)
		errs := 0
		for id := range objects {
			r.mu.Lock()
			_, got, err := r.readObject(OID(id))
			r.mu.Unlock()
			if err != nil {
				errs++
				continue
			}
			if !bytes.Equal(got, want[id]) {
				t.Fatalf("byte %d damaged: %s read as other bytes", at, id)
			}
		}
		st.Close()
		if errs == 0 {
			t.Logf("byte %d damaged: no object affected", at)
		}
	}
}

// parseIndex checks b as openPackIndex checks a mapped .idx.
func parseIndex(b []byte) (*packFile, error) {
	p := &packFile{name: "pack-test", idx: b}
	return p, p.checkIndex()
}

func TestPackIndexRefuses(t *testing.T) {
	t.Parallel()
	good := minimalIndex(plumbing.NewHash("1234567890123456789012345678901234567890"), 12)
	if _, err := parseIndex(good); err != nil {
		t.Fatalf("minimal index refused: %v", err)
	}
	for name, b := range map[string][]byte{
		"empty":     nil,
		"version 1": append([]byte{0xff, 't', 'O', 'c', 0, 0, 0, 1}, good[8:]...),
		"truncated": good[:len(good)-41],
		"fan-out decreases": func() []byte {
			b := append([]byte(nil), good...)
			binary.BigEndian.PutUint32(b[8:], 2)
			return b
		}(),
	} {
		if _, err := parseIndex(b); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
	x, _ := parseIndex(good)
	if off, ok, err := x.find(plumbing.NewHash("1234567890123456789012345678901234567890")); !ok || err != nil || off != 12 {
		t.Errorf("offset = %d, %v, %v", off, ok, err)
	}
	if _, ok, _ := x.find(plumbing.NewHash("1234567890123456789012345678901234567891")); ok {
		t.Error("found an object the index does not hold")
	}
}

// minimalIndex is a version 2 index of one object at off.
func minimalIndex(h plumbing.Hash, off uint32) []byte {
	var b bytes.Buffer
	b.Write([]byte{0xff, 't', 'O', 'c', 0, 0, 0, 2})
	for i := 0; i < 256; i++ {
		n := uint32(0)
		if i >= int(h[0]) {
			n = 1
		}
		binary.Write(&b, binary.BigEndian, n)
	}
	b.Write(h[:])
	b.Write([]byte{0, 0, 0, 0}) // CRC
	binary.Write(&b, binary.BigEndian, off)
	b.Write(make([]byte, 40)) // checksums
	return b.Bytes()
}

// FuzzPackIndex: no index that checkIndex accepts makes find panic or return an offset outside
// the file's tables. The input is the index after its fan-out table, which
// is computed from the names so that inputs stay small (a fan-out table is
// 1 KiB; TestPackIndexRefuses covers bad ones).
func FuzzPackIndex(f *testing.F) {
	h := plumbing.NewHash("1234567890123456789012345678901234567890")
	f.Add(minimalIndex(h, 12)[8+256*4:], h[:])
	f.Add(minimalIndex(h, 0x80000001)[8+256*4:], h[:])
	f.Fuzz(func(t *testing.T, tables, probe []byte) {
		if len(tables) > 512 {
			return
		}
		n := (len(tables) - 40) / 28
		if n < 0 {
			n = 0
		}
		var counts [256]uint32
		for i := 0; i < n; i++ {
			counts[tables[20*i]]++
		}
		var b bytes.Buffer
		b.Write([]byte{0xff, 't', 'O', 'c', 0, 0, 0, 2})
		sum := uint32(0)
		for i := range counts {
			sum += counts[i]
			binary.Write(&b, binary.BigEndian, sum)
		}
		b.Write(tables)
		x, err := parseIndex(b.Bytes())
		if err != nil {
			return
		}
		var ph plumbing.Hash
		copy(ph[:], probe)
		for _, q := range []plumbing.Hash{ph, h, {}} {
			if off, ok, _ := x.find(q); ok && off < 0 {
				t.Fatalf("negative offset %d", off)
			}
		}
	})
}
