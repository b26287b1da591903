package gitstore

import (
	"bytes"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/object"
)

const (
	fuzzA = "1111111111111111111111111111111111111111"
	fuzzB = "2222222222222222222222222222222222222222"
)

// naivePackedRefs is a reference parser for the fuzz test: every record in
// file order, and whether every line is well formed.
func naivePackedRefs(data []byte) (names []string, oids []OID, sortedHeader, ok bool) {
	lines := strings.Split(string(data), "\n")
	if len(lines) > 0 && lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	} else if len(data) > 0 && !(len(lines) == 1 && strings.HasPrefix(lines[0], packedHeader)) {
		// a last record without its newline: git refuses the file (cut
		// short), and so does the reader since session 22
		return nil, nil, false, false
	}
	prevRecord := false
	for i, line := range lines {
		switch {
		case i == 0 && strings.HasPrefix(line, packedHeader):
			sortedHeader = slices.Contains(strings.Fields(line[len(packedHeader):]), "sorted")
			prevRecord = false
		case strings.HasPrefix(line, "^"):
			if !prevRecord || !validPeeled([]byte(line)) {
				return nil, nil, false, false
			}
			prevRecord = false
		default:
			oid, name, ok := naiveRecord(line)
			if !ok {
				return nil, nil, false, false
			}
			names, oids = append(names, name), append(oids, OID(oid))
			prevRecord = true
		}
	}
	return names, oids, sortedHeader, true
}

// naiveRecord is the reference's "<oid> <name>" line, checked from the
// format and not by the reader's own parsePackedLine (which the fuzz test
// checks): 40 lower-case hex digits, one space, a name with no space, tab,
// CR or NUL.
func naiveRecord(line string) (oid, name string, ok bool) {
	oid, name, ok = strings.Cut(line, " ")
	if !ok || len(oid) != 40 || strings.Trim(oid, "0123456789abcdef") != "" ||
		name == "" || strings.ContainsAny(name, " \t\r\x00") {
		return "", "", false
	}
	return oid, name, true
}

// naiveBadRecord reports whether a line that is neither the header nor a
// peeled line is not a record: the reader refuses such a file, when read
// (unsorted) or when a scan reaches the line (sorted).
func naiveBadRecord(data []byte) bool {
	lines := strings.Split(string(data), "\n")
	if len(lines) > 0 && lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	}
	for i, line := range lines {
		if i == 0 && strings.HasPrefix(line, packedHeader) || strings.HasPrefix(line, "^") {
			continue
		}
		if _, _, ok := naiveRecord(line); !ok {
			return true
		}
	}
	return false
}

// FuzzParsePackedRefs checks the packed-refs reader against a naive linear
// parse: binary search finds every record (the first of duplicates), prefix
// scans list them in order, and removing a ref leaves a file without it.
func FuzzParsePackedRefs(f *testing.F) {
	f.Add([]byte("# pack-refs with: peeled fully-peeled sorted \n" +
		fuzzA + " refs/heads/main\n" + fuzzB + " refs/tags/v1\n^" + fuzzA + "\n"))
	f.Add([]byte(fuzzB + " refs/heads/z\n" + fuzzA + " refs/heads/a\n^" + fuzzB + "\n")) // unsorted, no header
	f.Add([]byte(fuzzA + " refs/heads/a\n" + fuzzB + " refs/heads/a\n"))                 // duplicate
	f.Add([]byte(fuzzA + " refs/heads/no-newline"))                                      // no final newline: refused
	f.Add([]byte("^" + fuzzA + "\n"))                                                    // peeled without a record
	f.Add([]byte("# pack-refs with: peeled \n# second comment\n"))                       // bad comment
	f.Add([]byte("# pack-refs with: sorted"))                                            // header only
	f.Add([]byte(fuzzA + "  refs/heads/two-spaces\n" + fuzzA + " refs/x\r\n\n\n"))       // odd spacing
	f.Add([]byte(""))
	// lines that are not records, sorted and not: CR, tab, NUL, space in
	// a name; upper-case, SHA-256 and short ids; no name
	for _, bad := range []string{
		fuzzA + " refs/heads/crlf\r", fuzzA + " refs/heads/t\tab", fuzzA + " refs/heads/n\x00ul", fuzzA + " refs/heads/sp ace",
		strings.ToUpper("abcdef"+fuzzA[6:]) + " refs/heads/upper", fuzzA + fuzzB[:24] + " refs/heads/sha256", fuzzA[:39] + " refs/heads/short",
		fuzzA + " ",
	} {
		f.Add([]byte(fuzzA + " refs/heads/a\n" + bad + "\n"))
		f.Add([]byte("# pack-refs with: peeled fully-peeled sorted \n" + fuzzA + " refs/heads/a\n" + bad + "\n"))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		p, perr := parsePackedRefs(data)
		// Whatever the input, lookups must not panic.
		if perr == nil {
			p.find("refs/heads/main")
			p.scanPrefix("refs/", func([]byte, OID) bool { return true })
		}
		if naiveBadRecord(data) && perr == nil {
			if err := p.scanPrefix("", func([]byte, OID) bool { return true }); err == nil {
				t.Fatalf("a line that is not a record accepted: %q", data)
			}
		}
		names, oids, sortedHeader, ok := naivePackedRefs(data)
		if !ok {
			return
		}
		if sortedHeader && !slices.IsSorted(names) {
			return // a file that lies about its order: git gives no guarantee either
		}
		if perr != nil {
			t.Fatalf("well-formed packed-refs refused: %v", perr)
		}
		first := map[string]OID{}
		for i, n := range names {
			if _, seen := first[n]; !seen {
				first[n] = oids[i]
			}
		}
		for n, want := range first {
			got, found, err := p.find(n)
			if err != nil || !found || got != want {
				t.Fatalf("find(%q) = %q, %v, %v; want %s", n, got, found, err, want)
			}
		}
		if _, found, err := p.find("refs/\x00absent"); found || err != nil {
			t.Fatalf("found an absent name (%v)", err)
		}
		var scanned []string
		if err := p.scanPrefix("", func(n []byte, _ OID) bool { scanned = append(scanned, string(n)); return true }); err != nil {
			t.Fatal(err)
		}
		want := slices.Clone(names)
		slices.Sort(want)
		if !slices.Equal(scanned, want) {
			t.Fatalf("scan = %q, want %q", scanned, want)
		}
		if len(names) == 0 {
			return
		}
		rest, err := parsePackedRefs(p.without(map[string]bool{names[0]: true}))
		if err != nil {
			t.Fatalf("packed-refs without %q does not parse: %v", names[0], err)
		}
		if _, found, _ := rest.find(names[0]); found {
			t.Fatalf("%q survived its removal", names[0])
		}
		for n := range first {
			if _, found, _ := rest.find(n); !found && n != names[0] {
				t.Fatalf("removing %q lost %q", names[0], n)
			}
		}
	})
}

// FuzzParseLooseRef checks the loose ref parser: an accepted value is a
// lower-case object id or a valid ref name, and ids round-trip.
func FuzzParseLooseRef(f *testing.F) {
	for _, seed := range []string{fuzzA + "\n", fuzzA, strings.ToUpper("abcdef" + fuzzA[6:]), "ref: refs/heads/main\n",
		"ref:refs/heads/x", "ref: HEAD\n", "", "\n", zeroOID + "\n", fuzzA + "x", fuzzA + " trailing"} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		oid, target, err := parseLooseRef(data)
		if err != nil {
			if oid != "" || target != "" {
				t.Fatal("values returned with an error")
			}
			return
		}
		switch {
		case target != "":
			if oid != "" || CheckRefName(target) != nil {
				t.Fatalf("bad symbolic result %q %q", oid, target)
			}
		case isHexOID(string(oid)) && oid != zeroOID:
			again, _, err := parseLooseRef([]byte(string(oid) + "\n"))
			if err != nil || again != oid {
				t.Fatalf("id %s does not round-trip", oid)
			}
		default:
			t.Fatalf("accepted %q as %q", data, oid)
		}
	})
}

// FuzzCheckRefName checks that every accepted name is free of the
// characters and sequences git forbids, and stays inside the repository.
func FuzzCheckRefName(f *testing.F) {
	for _, seed := range []string{"refs/heads/main", "refs/heads/a..b", "refs/heads/.x", "refs/heads/x.lock",
		"refs/heads/a@{1}", "refs/heads/a/", "refs/heads/../../etc", "refs/heads/é", "refs//x", "refs/x."} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, name string) {
		if CheckRefName(name) != nil {
			return
		}
		if strings.ContainsAny(name, " ~^:?*[\\\x00\x7f") || strings.Contains(name, "..") || strings.Contains(name, "@{") ||
			strings.Contains(name, "//") || strings.HasSuffix(name, "/") || strings.HasSuffix(name, ".") {
			t.Fatalf("accepted %q", name)
		}
		for _, c := range []byte(name) {
			if c < 0x20 {
				t.Fatalf("accepted control character in %q", name)
			}
		}
		for _, comp := range strings.Split(name, "/") {
			if comp == "" || comp[0] == '.' || strings.HasSuffix(comp, ".lock") {
				t.Fatalf("accepted component %q of %q", comp, name)
			}
		}
		rel, err := filepath.Rel("/repo", filepath.Join("/repo", filepath.FromSlash(name)))
		if err != nil || strings.HasPrefix(rel, "..") || !strings.HasPrefix(filepath.ToSlash(rel), "refs/") {
			t.Fatalf("%q escapes the repository: %s", name, rel)
		}
	})
}

// FuzzTreeEncode checks that accepted trees decode (with go-git) to the same
// entries in git order, and that every accepted name passes CheckTreeName.
func FuzzTreeEncode(f *testing.F) {
	f.Add("a", "b", ".git", true)
	f.Add("a", "a", "c", false)
	f.Add("a.b", "a-b", "a", true)
	f.Add("x/y", "", ".", false)
	f.Add("GIT~1", ".gitmodules ", "ok", true)
	f.Fuzz(func(t *testing.T, n1, n2, n3 string, dir bool) {
		mode := ModeFile
		if dir {
			mode = ModeDir
		}
		in := []TreeEntry{{Name: n1, Mode: mode, OID: fuzzA}, {Name: n2, Mode: ModeFile, OID: fuzzB}, {Name: n3, Mode: ModeFile, OID: fuzzA}}
		data, err := encodeTree(in)
		if err != nil {
			return
		}
		for _, e := range in {
			if CheckTreeName(e.Name) != nil {
				t.Fatalf("accepted name %q", e.Name)
			}
		}
		mo := &plumbing.MemoryObject{}
		mo.SetType(plumbing.TreeObject)
		mo.Write(data)
		var tr object.Tree
		if err := tr.Decode(mo); err != nil {
			t.Fatalf("go-git cannot decode our tree: %v", err)
		}
		if len(tr.Entries) != len(in) {
			t.Fatalf("decoded %d entries, want %d", len(tr.Entries), len(in))
		}
		for i := 1; i < len(tr.Entries); i++ {
			a, b := tr.Entries[i-1], tr.Entries[i]
			if treeSortName(a.Name, Mode(a.Mode)) >= treeSortName(b.Name, Mode(b.Mode)) {
				t.Fatalf("entries out of git order: %q, %q", a.Name, b.Name)
			}
		}
		names := map[string]bool{}
		for _, e := range tr.Entries {
			names[e.Name] = true
		}
		for _, e := range in {
			if !names[e.Name] {
				t.Fatalf("entry %q lost", e.Name)
			}
		}
	})
}

// FuzzCommitRoundTrip checks that a commit PutCommit accepts decodes back
// to the same fields, signature included, and that its payload is the
// object minus the gpgsig header.
func FuzzCommitRoundTrip(f *testing.F) {
	sig := "-----BEGIN SSH SIGNATURE-----\nU1NIU0lH\n-----END SSH SIGNATURE-----\n"
	f.Add("Read Proof", "rp@example.invalid", "message\n", sig, int64(1741057567), 120)
	f.Add("", "", "", "", int64(0), 0)
	f.Add("a<b", "c", "no newline", "x", int64(5), -300)
	f.Add("n", "e", "\n\nleading blank lines\n", "line1\n\nline3\n", int64(99), 59)
	f.Add("n", "e", "m", " indented\n  more\n", int64(99), 59)
	f.Fuzz(func(t *testing.T, name, email, msg, signature string, unix int64, zoneMin int) {
		if zoneMin < -24*60 || zoneMin > 24*60 {
			return
		}
		when := time.Unix(unix, 0).In(time.FixedZone("", zoneMin*60))
		c := Commit{Tree: fuzzA, Parents: []OID{fuzzB}, Author: Signature{Name: name, Email: email, When: when}, Committer: Signature{Name: name, Email: email, When: when},
			Message: msg, Signature: signature}
		data, err := encodeCommit(c)
		if err != nil {
			return
		}
		mo := &plumbing.MemoryObject{}
		mo.SetType(plumbing.CommitObject)
		mo.Write(data)
		var gc object.Commit
		if err := gc.Decode(mo); err != nil {
			t.Fatalf("go-git cannot decode our commit: %v\n%q", err, data)
		}
		if gc.Author.Name != name || gc.Author.Email != email || gc.Committer.When.Unix() != unix {
			t.Fatalf("identity changed: %+v", gc.Author)
		}
		if gc.Message != msg {
			t.Fatalf("message changed: %q -> %q", msg, gc.Message)
		}
		if gc.PGPSignature != signature {
			t.Fatalf("signature changed: %q -> %q", signature, gc.PGPSignature)
		}
		payload, err := CommitPayload(c)
		if err != nil {
			t.Fatal(err)
		}
		if signature == "" {
			if !bytes.Equal(payload, data) {
				t.Fatal("payload of an unsigned commit differs from the commit")
			}
		} else if !bytes.Equal(stripGpgsig(data), payload) {
			t.Fatalf("payload is not the commit minus gpgsig:\n%q\n%q", data, payload)
		}
	})
}
