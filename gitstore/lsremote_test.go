package gitstore

import (
	"io"
	"strings"
	"testing"
)

// parseLsRemoteHeadWhole is parseLsRemoteHead as it was before session 27,
// a parse of the whole output once git had finished: the oracle of
// lsRemoteParser, which parses it as it streams.
func parseLsRemoteHeadWhole(out []byte) ([]Ref, string, error) {
	text := string(out)
	var refs []Ref
	head := ""
	for rest := text; rest != ""; {
		var line string
		line, rest, _ = strings.Cut(rest, "\n")
		if r, ok := strings.CutPrefix(line, "ref: "); ok {
			target, name, _ := strings.Cut(r, "\t")
			if name == "HEAD" && CheckRefName(target) == nil {
				head = target
			}
			continue
		}
		if _, name, ok := strings.Cut(line, "\t"); ok && (name == "HEAD" || strings.HasSuffix(name, "^{}")) {
			continue
		}
		if line == "" {
			continue
		}
		if refs == nil {
			refs = make([]Ref, 0, strings.Count(rest, "\n")+1)
		}
		r, err := parseLsRemoteLine(line)
		if err != nil {
			return nil, "", err
		}
		refs = append(refs, r)
	}
	return refs, head, nil
}

// parseLsRemoteHead is lsRemoteParser given the whole output at once: the
// tests' parse of an output they hold (lsRemoteSymref streams git's).
func parseLsRemoteHead(out []byte) ([]Ref, string, error) {
	p := newLsRemoteParser()
	p.Write(out)
	return p.finish()
}

// chunkReader returns its data in reads of the sizes given, in turn.
type chunkReader struct {
	data  []byte
	sizes []byte
	i     int
}

func (r *chunkReader) Read(b []byte) (int, error) {
	if len(r.data) == 0 {
		return 0, io.EOF
	}
	n := len(r.data)
	if len(r.sizes) > 0 {
		n = min(n, 1+int(r.sizes[r.i%len(r.sizes)]))
		r.i++
	}
	n = copy(b, r.data[:n])
	r.data = r.data[n:]
	return n, nil
}

func sameListing(t *testing.T, what string, data []byte, refs []Ref, head string, err error, wantRefs []Ref, wantHead string, wantErr error) {
	t.Helper()
	if !sameError(err, wantErr) {
		t.Fatalf("%s %q: error %v, want %v", what, data, err, wantErr)
	}
	if err != nil {
		return
	}
	if head != wantHead || (refs == nil) != (wantRefs == nil) || len(refs) != len(wantRefs) {
		t.Fatalf("%s %q: %d refs, head %q; want %d, %q", what, data, len(refs), head, len(wantRefs), wantHead)
	}
	for i := range refs {
		if refs[i] != wantRefs[i] {
			t.Fatalf("%s %q: ref %d %v, want %v", what, data, i, refs[i], wantRefs[i])
		}
	}
}

// lsRemoteSeeds are git's own output shapes (git 2.39 ls-remote --symref
// of a repository with an annotated tag, an odd tag name and a run ref, in
// protocol v2 and v0) and the edges of the old parse.
func lsRemoteSeeds() []string {
	const a, b = "4dbb4805ace2b05cf86c1ae9b04efe42d7382309", "0264a4379947a96851031e989bcb340a6c5b295e"
	git := "ref: refs/heads/main\tHEAD\n" + a + "\tHEAD\n" + a + "\trefs/heads/main\n" + a + "\trefs/tags/odd/\xc3\xa9-name@x\n" +
		a + "\trefs/tags/readproof/runs/run-1\n" + b + "\trefs/tags/v1\n" + a + "\trefs/tags/v1^{}\n"
	return []string{git, strings.TrimSuffix(git, "\n"), "", "\n\n", a + "\tHEAD\n", "zz\tHEAD\nref: refs/heads/x\tHEAD",
		a + "\trefs/heads/a\nzz\trefs/x\nref: refs/heads/b\tHEAD\n", a + "\trefs/heads/a\r\n" + a + "\trefs/heads/b",
		"ref: refs/heads/x\tHEAD\nref: refs/heads/..\tHEAD\n" + a + "\trefs/heads/x", a + " refs/heads/x\n", a + "\trefs/heads/x\t\n",
		"ref: \tHEAD\n" + a + "\trefs/heads/y^{}\n" + a + "\trefs/heads/z^{}x\n"}
}

func FuzzLsRemoteParser(f *testing.F) {
	for _, s := range lsRemoteSeeds() {
		f.Add([]byte(s), []byte{0})
		f.Add([]byte(s), []byte{3, 40, 1})
	}
	f.Fuzz(func(t *testing.T, data, sizes []byte) {
		if len(data) > maxLsRemoteLine {
			return // a line may be longer than any git writes: refused, where the old parse took it
		}
		wantRefs, wantHead, wantErr := parseLsRemoteHeadWhole(data)
		// whole, as the listing's tests and listLocal's compare use it
		refs, head, err := parseLsRemoteHead(data)
		sameListing(t, "parseLsRemoteHead", data, refs, head, err, wantRefs, wantHead, wantErr)
		// as os/exec copies git's output in: reads of the sizes given
		p := newLsRemoteParser()
		if _, err := p.ReadFrom(&chunkReader{data: data, sizes: sizes}); err != nil {
			t.Fatal(err)
		}
		refs, head, err = p.finish()
		sameListing(t, "ReadFrom", data, refs, head, err, wantRefs, wantHead, wantErr)
		// written in pieces of the sizes given
		p = newLsRemoteParser()
		for rest, i := data, 0; len(rest) > 0; i++ {
			n := len(rest)
			if len(sizes) > 0 {
				n = min(n, 1+int(sizes[i%len(sizes)]))
			}
			p.Write(rest[:n])
			rest = rest[n:]
		}
		refs, head, err = p.finish()
		sameListing(t, "Write", data, refs, head, err, wantRefs, wantHead, wantErr)
	})
}

// TestLsRemoteParserLarge parses a listing of blocks of refs, read 64 KiB
// at a time, as the oracle does.
func TestLsRemoteParserLarge(t *testing.T) {
	const id = "0123456789abcdef0123456789abcdef01234567"
	var b strings.Builder
	b.WriteString("ref: refs/heads/main\tHEAD\n" + id + "\tHEAD\n" + id + "\trefs/heads/main\n")
	for i := 0; i < 3*lsRemoteBlock+7; i++ {
		b.WriteString(id + "\trefs/tags/readproof/runs/run-" + strings.Repeat("x", i%50) + "\n")
		if i%1000 == 0 {
			b.WriteString(id + "\trefs/tags/readproof/runs/run-" + strings.Repeat("x", i%50) + "^{}\n")
		}
	}
	data := []byte(b.String())
	wantRefs, wantHead, wantErr := parseLsRemoteHeadWhole(data)
	p := newLsRemoteParser()
	if _, err := p.ReadFrom(&chunkReader{data: data, sizes: []byte{255, 17, 200}}); err != nil {
		t.Fatal(err)
	}
	refs, head, err := p.finish()
	sameListing(t, "ReadFrom", data[:80], refs, head, err, wantRefs, wantHead, wantErr)
	if len(refs) != 3*lsRemoteBlock+8 {
		t.Fatalf("%d refs, want %d", len(refs), 3*lsRemoteBlock+8)
	}
}

// TestLsRemoteParserLongLine refuses a line longer than any git writes
// without holding it: the bytes after the limit are read and dropped, and
// git's output is read to its end.
func TestLsRemoteParserLongLine(t *testing.T) {
	const id = "0123456789abcdef0123456789abcdef01234567"
	// eight times the limit, so that holding it would show in what is held
	long := id + "\trefs/heads/" + strings.Repeat("a", 8*maxLsRemoteLine) + "\n"
	data := []byte(id + "\trefs/heads/main\n" + long + id + "\trefs/heads/z\n")
	p := newLsRemoteParser()
	n, err := p.ReadFrom(&chunkReader{data: data})
	if err != nil || n != int64(len(data)) {
		t.Fatalf("read %d of %d bytes: %v", n, len(data), err)
	}
	if cap(p.pending) > 4*maxLsRemoteLine {
		t.Errorf("held %d bytes for a line of %d", cap(p.pending), len(long))
	}
	_, _, err = p.finish()
	if err == nil || !strings.Contains(err.Error(), `unexpected ls-remote line "`+id+`\trefs/heads/aaaa`) {
		t.Fatalf("error %v, want the long line refused", err)
	}
	// a line of the limit's length is taken
	ok := id + "\trefs/heads/" + strings.Repeat("a", maxLsRemoteLine-len(id)-12) + "\n"
	refs, _, err := parseLsRemoteHead([]byte(ok))
	if err != nil || len(refs) != 1 {
		t.Fatalf("a line of %d bytes: %v", len(ok), err)
	}
}
