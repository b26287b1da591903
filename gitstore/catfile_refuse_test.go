package gitstore

import (
	"bytes"
	"errors"
	"io"
	"os/exec"
	"strconv"
	"testing"
)

// TestGitReaderAfterRefusal: a read the cat-file reader refuses (an object
// over the size asked, or not a blob) leaves the reader answering the next
// question with its own answer, not with the bytes of the refused one: the
// rest of a small refused answer is read through, and for a large one
// (over drainMax) git is stopped and started again rather than made to
// inflate what nobody reads.
func TestGitReaderAfterRefusal(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	s := NewTestStore(t)
	big := bytes.Repeat([]byte("refused "), 8<<10) // 64 KiB, over the pipe's buffer
	bigID, err := s.PutBlob(big)
	if err != nil {
		t.Fatal(err)
	}
	huge := bytes.Repeat([]byte("0123456789abcdef"), (drainMax+1<<10)/16)
	hugeID, err := s.PutBlob(huge)
	if err != nil {
		t.Fatal(err)
	}
	small, err := s.PutBlob([]byte("small\n"))
	if err != nil {
		t.Fatal(err)
	}
	tree, err := s.PutTree([]TreeEntry{{Name: "big", Mode: ModeFile, OID: bigID}})
	if err != nil {
		t.Fatal(err)
	}
	gr := openGitReader(t, s)
	good := func(step string) {
		t.Helper()
		if data, err := gr.BlobAtMost(small, 100); err != nil || string(data) != "small\n" {
			t.Fatalf("after %s: BlobAtMost(small) = %q, %v", step, data, err)
		}
		var buf bytes.Buffer
		if n, err := gr.BlobTo(small, 100, &buf); err != nil || n != 6 || buf.String() != "small\n" {
			t.Fatalf("after %s: BlobTo(small) = %d %q, %v", step, n, buf.String(), err)
		}
		if data, err := gr.Blob(bigID); err != nil || !bytes.Equal(data, big) {
			t.Fatalf("after %s: Blob(big) = %d bytes, %v", step, len(data), err)
		}
	}
	starts := func(want int) {
		t.Helper()
		if gr.starts != want {
			t.Fatalf("git cat-file --batch started %d times, want %d", gr.starts, want)
		}
	}
	good("opening")
	if _, err := gr.BlobAtMost(bigID, 10); !errors.Is(err, ErrTooLarge) {
		t.Fatalf("BlobAtMost(big, 10) = %v, want ErrTooLarge", err)
	}
	good("BlobAtMost refused an object too large")
	if _, err := gr.BlobTo(bigID, 10, io.Discard); !errors.Is(err, ErrTooLarge) {
		t.Fatalf("BlobTo(big, 10) = %v, want ErrTooLarge", err)
	}
	good("BlobTo refused an object too large")
	if _, err := gr.BlobTo(tree, -1, io.Discard); !errors.Is(err, ErrNotFound) {
		t.Fatalf("BlobTo(tree) = %v, want ErrNotFound", err)
	}
	good("BlobTo refused a tree")
	if err := CheckObjectSize(gr, bigID, 10); !errors.Is(err, ErrTooLarge) {
		t.Fatalf("CheckObjectSize(big, 10) = %v, want ErrTooLarge", err)
	}
	if err := CheckObjectSize(gr, small, 10); err != nil {
		t.Fatalf("CheckObjectSize(small, 10) after a refusal = %v", err)
	}
	good("CheckObjectSize refused an object too large")
	errFull := errors.New("disk full")
	if _, err := gr.BlobTo(bigID, -1, failingWriter{errFull}); !errors.Is(err, errFull) {
		t.Fatalf("BlobTo(big) into a failing writer = %v", err)
	}
	good("BlobTo's writer failed")
	starts(1) // small refusals are read through

	if _, err := gr.BlobAtMost(hugeID, 10); !errors.Is(err, ErrTooLarge) {
		t.Fatalf("BlobAtMost(huge, 10) = %v, want ErrTooLarge", err)
	}
	good("BlobAtMost refused an object over drainMax")
	starts(2)
	if _, err := gr.BlobTo(hugeID, 10, io.Discard); !errors.Is(err, ErrTooLarge) {
		t.Fatalf("BlobTo(huge, 10) = %v, want ErrTooLarge", err)
	}
	good("BlobTo refused an object over drainMax")
	starts(3)
	if data, err := gr.Blob(hugeID); err != nil || !bytes.Equal(data, huge) {
		t.Fatalf("Blob(huge) = %d bytes, %v", len(data), err)
	}
	starts(3)
}

// TestGitReaderOutOfStep: an answer that names another object than the one
// asked (the pipe holds an answer nobody read, here a question sent behind
// the reader's back) is refused, not taken for the object asked, and the
// reader starts git again for the next question.
func TestGitReaderOutOfStep(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	s := NewTestStore(t)
	a, err := s.PutBlob([]byte("a\n"))
	if err != nil {
		t.Fatal(err)
	}
	b, err := s.PutBlob([]byte("b\n"))
	if err != nil {
		t.Fatal(err)
	}
	gr := openGitReader(t, s)
	if _, err := io.WriteString(gr.stdin, string(a)+"\n"); err != nil {
		t.Fatal(err)
	}
	if data, err := gr.Blob(b); err == nil {
		t.Fatalf("Blob(b) with a's answer in the pipe = %q, want an error", data)
	}
	if data, err := gr.Blob(b); err != nil || string(data) != "b\n" {
		t.Fatalf("Blob(b) next = %q, %v", data, err)
	}
	if gr.starts != 2 {
		t.Fatalf("git cat-file --batch started %d times, want 2", gr.starts)
	}
	// and the size check's own process: a's answer in its pipe
	if err := CheckObjectSize(gr, a, 1<<20); err != nil {
		t.Fatal(err)
	}
	if _, err := io.WriteString(gr.checkIn, string(a)+"\n"); err != nil {
		t.Fatal(err)
	}
	if err := CheckObjectSize(gr, b, 1); err == nil || errors.Is(err, ErrTooLarge) {
		t.Fatalf("CheckObjectSize(b) with a's answer in the pipe = %v, want an error that is not the size's", err)
	}
	if err := CheckObjectSize(gr, b, 1); !errors.Is(err, ErrTooLarge) {
		t.Fatalf("CheckObjectSize(b, 1) next = %v, want ErrTooLarge", err)
	}
	if err := CheckObjectSize(gr, a, 1<<20); err != nil {
		t.Fatalf("CheckObjectSize(a) after = %v", err)
	}
}

// FuzzParseCatFileAnswer: a header line parseCatFileAnswer accepts is one
// git writes (written again from what was parsed, it is the same line), with
// a size of at least 0; anything else is refused.
func FuzzParseCatFileAnswer(f *testing.F) {
	for _, s := range []string{
		"0123456789abcdef0123456789abcdef01234567 blob 6\n",
		"0123456789abcdef0123456789abcdef01234567 missing\n",
		"0123456789abcdef0123456789abcdef01234567 tree 0\n",
		"0123456789abcdef0123456789abcdef01234567 blob 9223372036854775807\n",
		"0123456789abcdef0123456789abcdef01234567 blob 9223372036854775808\n",
		"0123456789abcdef0123456789abcdef01234567 blob -1\n",
		"0123456789abcdef0123456789abcdef01234567 blob +1\n",
		"0123456789abcdef0123456789abcdef01234567 blob 01\n",
		"0123456789abcdef0123456789abcdef01234567  blob 1\n",
		"0123456789abcdef0123456789abcdef01234567 ambiguous\n",
		"0123456789abcdef0123456789abcdef01234567 blob 6",
		"refs/heads/main missing\n",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, line string) {
		a, err := parseCatFileAnswer(line)
		if err != nil {
			return
		}
		var again string
		if a.missing {
			again = a.oid + " missing\n"
		} else {
			again = a.oid + " " + a.kind + " " + strconv.FormatInt(a.size, 10) + "\n"
		}
		if again != line || a.size < 0 || !isHexOID(a.oid) || a.missing && a.kind != "" {
			t.Fatalf("parseCatFileAnswer(%q) = %+v", line, a)
		}
	})
}

// failAfter is a writer that takes n bytes, then fails every write.
type failAfter struct {
	n      int
	err    error
	wrote  int // bytes taken
	writes int // writes asked after the one that failed
	failed bool
}

func (f *failAfter) Write(p []byte) (int, error) {
	if f.failed {
		f.writes++
		return 0, f.err
	}
	if f.wrote+len(p) <= f.n {
		f.wrote += len(p)
		return len(p), nil
	}
	k := f.n - f.wrote
	f.wrote, f.failed = f.n, true
	return k, f.err
}

// TestGitReaderWriterFailsPartway (session 25, verifyedges): when the
// writer BlobTo copies into failed partway through a blob, the cat-file
// reader still read the blob to its end, all of a huge one inflated by git
// into the pipe for nobody. It now stops: the rest of a small answer is
// read through (no new process), and git is stopped in the middle of a
// large one and started again for the next question, which gets its own
// answer.
func TestGitReaderWriterFailsPartway(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	s := NewTestStore(t)
	huge := bytes.Repeat([]byte("0123456789abcdef"), 4*drainMax/16)
	hugeID, err := s.PutBlob(huge)
	if err != nil {
		t.Fatal(err)
	}
	other := bytes.Repeat([]byte("other "), 20<<10)
	otherID, err := s.PutBlob(other)
	if err != nil {
		t.Fatal(err)
	}
	gr := openGitReader(t, s)
	errFull := errors.New("disk full")
	good := func(step string, starts int) {
		t.Helper()
		var buf bytes.Buffer
		if n, err := gr.BlobTo(otherID, -1, &buf); err != nil || n != int64(len(other)) || !bytes.Equal(buf.Bytes(), other) {
			t.Fatalf("after %s: BlobTo(other) = %d bytes, %v", step, n, err)
		}
		if gr.starts != starts {
			t.Fatalf("after %s: git cat-file --batch started %d times, want %d", step, gr.starts, starts)
		}
	}
	for _, c := range []struct {
		name   string
		after  int
		starts int // cat-file processes started once the next read is done
	}{
		// over drainMax left: git is stopped, and started again
		{"the writer failed after 100,000 bytes of 4 MiB", 100_000, 2},
		{"the writer failed at once", 0, 3},
		// less than drainMax left: read through
		{"the writer failed 100,000 bytes before the end", len(huge) - 100_000, 3},
	} {
		w := &failAfter{n: c.after, err: errFull}
		n, err := gr.BlobTo(hugeID, -1, w)
		if !errors.Is(err, errFull) || n != int64(c.after) {
			t.Fatalf("%s: BlobTo(huge) = %d, %v; want %d, the writer's error", c.name, n, err, c.after)
		}
		if w.writes != 0 {
			t.Errorf("%s: BlobTo wrote %d times more into the writer that failed", c.name, w.writes)
		}
		good(c.name, c.starts)
	}
	// and the huge blob reads whole afterwards
	var buf bytes.Buffer
	if n, err := gr.BlobTo(hugeID, -1, &buf); err != nil || n != int64(len(huge)) || !bytes.Equal(buf.Bytes(), huge) {
		t.Fatalf("BlobTo(huge) after the failures = %d bytes, %v", n, err)
	}
}
