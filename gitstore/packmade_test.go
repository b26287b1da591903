package gitstore

import (
	"bytes"
	"compress/zlib"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// churn makes a repository of commits commits, each rewriting files
// files of size bytes of zeros that differ from the last version in a
// few bytes, written with git fast-import: its history makes far more
// bytes than its pack holds (each version a delta of a few bytes).
func churn(t *testing.T, commits, files, size int) string {
	t.Helper()
	git, err := findGit()
	if err != nil {
		t.Skip("git is not installed")
	}
	dir := filepath.Join(t.TempDir(), "up")
	mirrorGit(t, filepath.Dir(dir), "init", "-q", "-b", "main", dir)
	var in strings.Builder
	body := make([]byte, size)
	for c := 0; c < commits; c++ {
		fmt.Fprintf(&in, "commit refs/heads/main\ncommitter T <t@example.test> %d +0000\ndata 2\nc\n", 1700000000+c)
		for f := 0; f < files; f++ {
			copy(body[size/2:], fmt.Sprintf("version %d of file %d", c, f))
			fmt.Fprintf(&in, "M 100644 inline f%d.bin\ndata %d\n%s\n", f, size, body)
		}
		in.WriteString("\n")
	}
	cmd := exec.Command(git, "fast-import", "--quiet")
	cmd.Dir = dir
	cmd.Env = append(gitEnv(), "HOME="+dir)
	cmd.Stdin = strings.NewReader(in.String())
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("fast-import: %v\n%s", err, out)
	}
	return dir
}

// A remote whose pack makes far more than it weighs (here 40 versions of
// 8 files of 64 KiB, each a delta of a few bytes: 20 MiB made from a pack
// of tens of KiB) is refused while the pack is scanned, once what its
// entries make passes the larger of the pack bound and madePerPackByte
// times the bytes read: go-git makes every object whole to index a pack,
// so a pack of megabytes could cost it terabytes. Over a path remote and
// a file:// URL (stock git's upload-pack, which fetches a git source on
// this machine), nothing of the refused pack is kept; under a pack bound
// that covers what it makes, the same repository fetches.
func TestMirrorRefusesPackMakingTooMuch(t *testing.T) {
	up := churn(t, 40, 8, 64<<10)
	for _, url := range []string{up, "file://" + filepath.ToSlash(up)} {
		m, err := OpenMirror(t.TempDir(), url, MirrorOptions{MaxObjectBytes: 128 << 10})
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		err = m.Fetch(ctx)
		cancel()
		if !errors.Is(err, ErrRepoTooLarge) || !strings.Contains(err.Error(), "its objects come to more than") {
			t.Fatalf("%s: Fetch = %v, want ErrRepoTooLarge for what the pack makes", url, err)
		}
		noPack(t, m)
		m, _ = OpenMirror(t.TempDir(), url, MirrorOptions{MaxObjectBytes: 128 << 10, MaxPackBytes: 64 << 20})
		ctx, cancel = context.WithTimeout(context.Background(), 30*time.Second)
		err = m.Fetch(ctx)
		cancel()
		if err != nil {
			t.Fatalf("%s: Fetch under a pack bound that covers what it makes: %v", url, err)
		}
		if got, _, _, err := m.ResolveFile("main", "f7.bin", 1<<20); err != nil || !bytes.Contains(got, []byte("version 39 of file 7")) {
			t.Fatalf("%s: ResolveFile = %d bytes, %v", url, len(got), err)
		}
	}
}

// What a pack makes is counted from each entry's header (a delta's from
// the sizes its data starts with), so the entry that passes the bound is
// refused before the rest of it is inflated: here the stream of that
// entry is broken after its header (a whole object) or after the delta's
// sizes, and the answer is still the size refusal, not a damaged pack.
func TestScanPackCountsMadeBeforeInflating(t *testing.T) {
	const size = 1 << 20
	b := packBounds{object: size, bytes: size, objects: 100}
	base := packEntry(3, size, nil, make([]byte, size))
	garbage := bytes.Repeat([]byte{0xff}, 64)
	// a whole object's header: packEntry's less the stream of nothing
	// (what follows a header of one byte)
	head := packEntry(3, size, nil, nil)
	head = head[:len(head)-len(packEntry(0, 0, nil, nil)[1:])]
	// a delta stored, not deflated, so that its sizes come through and
	// the stream breaks where its checksum should be
	delta := append(varint(size), varint(size)...)
	delta = append(delta, 0x90, 0x10) // copy 4096 bytes from offset 0
	var stored bytes.Buffer
	zw, _ := zlib.NewWriterLevel(&stored, zlib.NoCompression)
	zw.Write(delta)
	zw.Close()
	deltaHead := packEntry(7, len(delta), make([]byte, 20), nil)
	deltaHead = deltaHead[:1+20]
	brokenDelta := append(append(deltaHead, stored.Bytes()[:stored.Len()-4]...), garbage...)
	for name, entry := range map[string][]byte{
		"whole": append(head, garbage...),
		"delta": brokenDelta,
	} {
		err := scanPack(bytes.NewReader(packOf(base, entry)), b)
		if !errors.Is(err, ErrRepoTooLarge) || !strings.Contains(err.Error(), "by pack entry 1") {
			t.Errorf("%s: scanPack = %v, want ErrRepoTooLarge at entry 1", name, err)
		}
		// the same entries under a bound that admits them (the delta
		// counted with its base): the broken stream is read, and said to be
		if err := scanPack(bytes.NewReader(packOf(base, entry)), packBounds{object: size, bytes: 3 * size, objects: 100}); !errors.Is(err, errPackCorrupt) {
			t.Errorf("%s under a bound that admits it: scanPack = %v, want a damaged pack", name, err)
		}
	}
	// one entry that makes the bound exactly passes
	if err := scanPack(bytes.NewReader(packOf(base)), b); err != nil {
		t.Errorf("a pack that makes its bound: %v", err)
	}
}

// go-git reads a delta's base whole each time it applies the delta
// (from its cache, or inflated again when the base is over the cache's
// 96 MiB), so a delta counts at its base's size with the size it makes:
// one 100 MiB blob of zeros and 20 deltas of it that make 4 bytes each
// (a pack of 100 KB, 2 KB a delta) cost go-git 9.4 s and 1 GB, 0.47 s a
// delta, where counting the 4 bytes alone let through 500,000 of them.
// Here the bound is 4 times the base: the base and two such deltas pass,
// the third (pack entry 3) is refused from its header.
func TestScanPackCountsDeltaBases(t *testing.T) {
	const size = 1 << 20
	base := packEntry(3, size, nil, make([]byte, size))
	entries := [][]byte{base}
	at := 12 + len(base) // where the next entry starts; the base at 12
	for i := range 10 {
		d := append(varint(size), varint(4)...)
		d = append(d, 4, 'd', 'o', 'c', byte('0'+i)) // insert 4 bytes
		e := packEntry(6, len(d), ofsBack(int64(at-12)), d)
		entries = append(entries, e)
		at += len(e)
	}
	pack := packOf(entries...)
	err := scanPack(bytes.NewReader(pack), packBounds{object: size, bytes: 4 * size, objects: 100})
	if !errors.Is(err, ErrRepoTooLarge) || !strings.Contains(err.Error(), "by pack entry 3") {
		t.Errorf("scanPack = %v, want ErrRepoTooLarge at entry 3 (the base read for each delta)", err)
	}
	// under a bound that covers the base read eleven times, it passes
	if err := scanPack(bytes.NewReader(pack), packBounds{object: size, bytes: 11*size + 40, objects: 100}); err != nil {
		t.Errorf("scanPack under a bound that admits it: %v", err)
	}
}

// A delta's base is about as large as what it makes, so a history counted
// with its bases makes twice what its objects alone do, and the ratio is
// twice the 256 they were held to: 1,000 deltas that each copy most of a
// 16 KiB base and add 64 bytes of their own (about 90 bytes of pack each)
// make about 180 times their bytes, 360 counting the base, and pass;
// deltas that add 16 bytes (about 40 of pack) make 800 times theirs
// counting the base, and are refused once past what a pack may always
// make.
func TestScanPackRatioCountsBases(t *testing.T) {
	r := rand.New(rand.NewPCG(9, 10))
	const size = 16 << 10
	noise := func(n int) []byte {
		b := make([]byte, n)
		for i := range b {
			b[i] = byte(r.Uint32())
		}
		return b
	}
	pack := func(own int) []byte {
		entries := [][]byte{packEntry(3, size, nil, noise(size))}
		at := 12 + len(entries[0])
		for range 1000 {
			d := append(varint(size), varint(size)...)
			d = append(d, 0x80|0x30, byte(size-own), byte((size-own)>>8)) // copy from offset 0
			d = append(d, byte(own))
			d = append(d, noise(own)...)
			e := packEntry(6, len(d), ofsBack(int64(at-12)), d)
			entries = append(entries, e)
			at += len(e)
		}
		return packOf(entries...)
	}
	b := packBounds{object: size, bytes: 64 << 10, objects: 2000}
	if err := scanPack(bytes.NewReader(pack(64)), b); err != nil {
		t.Errorf("deltas of 90 bytes that make 16 KiB from a base of 16 KiB: %v, want them fetched", err)
	}
	err := scanPack(bytes.NewReader(pack(16)), b)
	if !errors.Is(err, ErrRepoTooLarge) || !strings.Contains(err.Error(), "its objects come to more than") {
		t.Errorf("deltas of 40 bytes: %v, want ErrRepoTooLarge for what they make", err)
	}
}

// The bytes of pack that what a pack makes is held to are those scanned
// up to the entry, not those read ahead of it into a buffer: two 1 MiB
// objects of zeros (a KB of pack each) under a bound of 1 MiB are refused
// at the second, the 60 KB of noise after them not counted yet. (Read
// ahead, the noise allowed 30 MB.)
func TestScanPackCountsBytesScanned(t *testing.T) {
	const size = 1 << 20
	r := rand.New(rand.NewPCG(11, 12))
	noise := make([]byte, 60<<10)
	for i := range noise {
		noise[i] = byte(r.Uint32())
	}
	zeros := packEntry(3, size, nil, make([]byte, size))
	err := scanPack(bytes.NewReader(packOf(zeros, zeros, packEntry(3, len(noise), nil, noise))), packBounds{object: size, bytes: size, objects: 10})
	if !errors.Is(err, ErrRepoTooLarge) || !strings.Contains(err.Error(), "by pack entry 1, made from") {
		t.Fatalf("scanPack = %v, want ErrRepoTooLarge at entry 1", err)
	}
	// an entry's header: packEntry's less the stream of nothing
	head := len(packEntry(3, size, nil, nil)) - len(packEntry(0, 0, nil, nil)[1:])
	if want := fmt.Sprintf("made from %d bytes of pack", 12+len(zeros)+head); !strings.Contains(err.Error(), want) {
		t.Errorf("scanPack = %v, want it %s (the pack's header, the first entry and the second's header)", err, want)
	}
}
