package store

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/readproof/readproof/gitstore"
	"github.com/readproof/readproof/identity"
)

// The document index (docs/store-format.md, "Journal view", "Cost"): for a
// journal commit, each document of its view (NS/PATH[@TAG], the name
// DocumentPath gives it before any '~') with the newest run that delivered
// it and the snapshot that run delivered last. It is a function of the set
// of runs alone (the newest of each document's deliverers), so it is
// brought forward from an older journal commit by adding the runs recorded
// since, in any order. It is what inserting a run that sorts before the
// view's newest needs: a document some later run delivers keeps its bytes,
// every other document the run delivers shows the run's snapshot.
//
// It is derived, local data: a file in the store directory (ViewDocsFile),
// never a git object, read and written only on that out-of-order path, and
// validated on every read (format line, the commit it describes, a
// checksum, and against the view's tree where it is used); in a pull's
// check of many commits it lives in memory (CachingReader).

// ViewDocsFile is the document index's file at the top of the store.
const ViewDocsFile = "readproof-view-docs"

// viewDocsFormat is its first line.
const viewDocsFormat = "readproof-view-docs/1"

// viewShortWalk bounds the journal commits an out-of-order run walks (to
// fold the runs after it, or to bring the index forward) before it reads
// the whole journal to rebuild the index.
const viewShortWalk = 32

// docLast is a document's newest delivery.
type docLast struct {
	key  runKey
	snap gitstore.OID
}

// docIndex is the document index of the runs of journal commit commit.
type docIndex struct {
	commit gitstore.OID
	docs   map[string]docLast
}

// docName is the index's name of the document at segs (DocumentPath).
func docName(segs []string) string { return strings.Join(segs[1:], "/") }

// add folds run r into the index: each document it delivers names r
// unless a run that sorts after r delivered it.
func (ix *docIndex) add(r viewRun) error {
	for _, e := range r.entries {
		segs, err := r.entryPath(e)
		if err != nil {
			return err
		}
		n := docName(segs)
		if cur, ok := ix.docs[n]; ok && r.key.less(cur.key) {
			continue
		}
		ix.docs[n] = docLast{key: r.key, snap: gitstore.OID(e.Snapshot)}
	}
	return nil
}

// docSource keeps a document index between journal commits: a file in the
// store (fileDocs) or memory (memDocs).
type docSource interface {
	// load returns the index kept, or nil for none (or none valid). The
	// caller may bring what it returns forward (bringForward), and saves
	// nil when it found it wrong.
	load() *docIndex
	// save keeps ix; nil forgets the index kept, where that is cheap.
	save(ix *docIndex)
}

// memDocs keeps the index in memory, for a caller that computes many views
// in a row (CachingReader).
type memDocs struct{ ix *docIndex }

func (m *memDocs) load() *docIndex { return m.ix }

func (m *memDocs) save(ix *docIndex) { m.ix = ix }

// fileDocs keeps the index in a file; errors only lose the cache.
type fileDocs struct{ path string }

func (f fileDocs) load() *docIndex {
	// A regular file only, read to the size it has: the open does not
	// wait for a writer of a FIFO put at this name (O_NONBLOCK, which a
	// regular file ignores), and a device is not read without end.
	file, err := os.OpenFile(f.path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil
	}
	defer file.Close()
	fi, err := file.Stat()
	if err != nil || !fi.Mode().IsRegular() {
		return nil
	}
	data, err := io.ReadAll(io.LimitReader(file, fi.Size()+1))
	if err != nil || int64(len(data)) != fi.Size() {
		return nil // changed while read (a writer renames a whole one in)
	}
	ix, err := decodeDocIndex(data)
	if err != nil {
		return nil
	}
	return ix
}

// save writes the index beside its place and renames it there, so a
// reader sees a whole file or the one before; a torn or lost write (no
// sync) fails the reader's checks and costs a rebuild, never a wrong view.
// The temporary name ends in ".lock", so one a killed writer leaves is
// swept with the store's stale locks.
func (f fileDocs) save(ix *docIndex) {
	if ix == nil {
		return // a wrong file fails the next reader's checks too
	}
	tmp, err := os.CreateTemp(filepath.Dir(f.path), ViewDocsFile+"-*.lock")
	if err != nil {
		return
	}
	_, err = tmp.Write(encodeDocIndex(ix))
	if err == nil {
		// readable as the store's files are (a store shared with a group)
		if fi, serr := os.Stat(filepath.Join(filepath.Dir(f.path), "HEAD")); serr == nil {
			err = tmp.Chmod(fi.Mode().Perm() & 0o666)
		}
	}
	if cerr := tmp.Close(); err != nil || cerr != nil || os.Rename(tmp.Name(), f.path) != nil {
		os.Remove(tmp.Name())
	}
}

// encodeDocIndex writes
//
//	readproof-view-docs/1
//	commit <journal commit>
//	runs <n>
//	<created_at RFC 3339> <manifest> <run id>      n lines, in run order
//	docs <m>
//	<run line number> <snapshot> <document>        m lines, by document
//	sum <sha256 of everything above>
func encodeDocIndex(ix *docIndex) []byte {
	names := make([]string, 0, len(ix.docs))
	runAt := map[gitstore.OID]runKey{}
	size := 0
	for n, d := range ix.docs {
		names = append(names, n)
		runAt[d.key.manifest] = d.key
		size += len(n) + 50
	}
	sort.Strings(names)
	runs := make([]runKey, 0, len(runAt))
	for _, k := range runAt {
		runs = append(runs, k)
		size += len(k.run) + 80
	}
	sort.Slice(runs, func(i, j int) bool { return runs[i].less(runs[j]) })
	num := make(map[gitstore.OID]int, len(runs))
	// appended, not printed: 10,000 documents took 13.6 ms and 70,000
	// allocations through fmt
	b := make([]byte, 0, size+200)
	b = append(b, viewDocsFormat+"\ncommit "...)
	b = append(b, ix.commit...)
	b = append(b, "\nruns "...)
	b = strconv.AppendInt(b, int64(len(runs)), 10)
	b = append(b, '\n')
	for i, k := range runs {
		num[k.manifest] = i
		b = k.at.UTC().AppendFormat(b, time.RFC3339Nano)
		b = append(append(append(b, ' '), k.manifest...), ' ')
		b = append(append(b, k.run...), '\n')
	}
	b = append(b, "docs "...)
	b = strconv.AppendInt(b, int64(len(names)), 10)
	b = append(b, '\n')
	for _, n := range names {
		d := ix.docs[n]
		b = strconv.AppendInt(b, int64(num[d.key.manifest]), 10)
		b = append(append(append(b, ' '), d.snap...), ' ')
		b = append(append(b, n...), '\n')
	}
	sum := sha256.Sum256(b)
	b = append(b, "sum "...)
	b = hex.AppendEncode(b, sum[:])
	return append(b, '\n')
}

// decodeDocIndex reads encodeDocIndex's form, refusing anything else: a
// wrong sum (a torn or damaged file), another format, a malformed line.
func decodeDocIndex(data []byte) (*docIndex, error) {
	bad := func(what string) (*docIndex, error) { return nil, fmt.Errorf("%s: %s", ViewDocsFile, what) }
	body, sumLine, ok := cutLastLine(data)
	if !ok {
		return bad("no sum")
	}
	want, ok := strings.CutPrefix(sumLine, "sum ")
	sum := sha256.Sum256(body)
	if !ok || want != hex.EncodeToString(sum[:]) {
		return bad("sum does not match")
	}
	lines := strings.Split(strings.TrimSuffix(string(body), "\n"), "\n")
	if len(lines) < 4 || lines[0] != viewDocsFormat {
		return bad("not a " + viewDocsFormat + " file")
	}
	commit, ok := strings.CutPrefix(lines[1], "commit ")
	if !ok || !identity.IsObjectID(commit) {
		return bad("no commit")
	}
	nRuns, err := countLine(lines[2], "runs ", len(lines))
	if err != nil {
		return bad(err.Error())
	}
	lines = lines[3:]
	if len(lines) < nRuns+1 {
		return bad("short")
	}
	runs := make([]runKey, nRuns)
	for i, l := range lines[:nRuns] {
		at, rest, _ := strings.Cut(l, " ")
		m, run, _ := strings.Cut(rest, " ")
		t, err := time.Parse(time.RFC3339Nano, at)
		if err != nil || !identity.IsObjectID(m) || run == "" {
			return bad("malformed run line")
		}
		runs[i] = runKey{at: t.UTC(), run: run, manifest: gitstore.OID(m)}
	}
	lines = lines[nRuns:]
	nDocs, err := countLine(lines[0], "docs ", len(lines))
	if err != nil || nDocs != len(lines)-1 {
		return bad("document count")
	}
	ix := &docIndex{commit: gitstore.OID(commit), docs: make(map[string]docLast, nDocs)}
	for _, l := range lines[1:] {
		num, rest, _ := strings.Cut(l, " ")
		snap, name, _ := strings.Cut(rest, " ")
		i, err := strconv.Atoi(num)
		if err != nil || i < 0 || i >= nRuns || !identity.IsObjectID(snap) || name == "" {
			return bad("malformed document line")
		}
		ix.docs[name] = docLast{key: runs[i], snap: gitstore.OID(snap)}
	}
	return ix, nil
}

func cutLastLine(data []byte) (body []byte, last string, ok bool) {
	if len(data) == 0 || data[len(data)-1] != '\n' {
		return nil, "", false
	}
	i := bytes.LastIndexByte(data[:len(data)-1], '\n')
	if i < 0 {
		return nil, "", false
	}
	return data[:i+1], string(data[i+1 : len(data)-1]), true
}

func countLine(l, prefix string, most int) (int, error) {
	s, ok := strings.CutPrefix(l, prefix)
	n, err := strconv.Atoi(s)
	if !ok || err != nil || n < 0 || n > most {
		return 0, fmt.Errorf("malformed %q line", strings.TrimSpace(prefix))
	}
	return n, nil
}

// bringForward makes ix, the index of an ancestor J of tip, the index of
// tip: it walks back from tip to J along journal edges and adds the runs
// of the commits met. It reports false, changing nothing, when the walk
// meets more than budget commits or never meets J (J is not tip's
// ancestor, as for an index another store's history left), and how many
// commits it walked.
func (b viewBuilder) bringForward(ix *docIndex, tip gitstore.OID, budget int) (int, bool, error) {
	if ix.commit == tip {
		return 0, true, nil
	}
	seen := map[gitstore.OID]bool{tip: true, ix.commit: true}
	stack := []gitstore.OID{tip}
	met := map[gitstore.OID]bool{}
	metJ := false
	walked := 0
	for len(stack) > 0 {
		if walked >= budget {
			return walked, false, nil
		}
		id := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		walked++
		c, err := b.g.Commit(id)
		if err != nil {
			return walked, false, fmt.Errorf("read journal commit %s: %w", id, err)
		}
		ps, m := journalEdges(c)
		if m != "" {
			met[m] = true
		}
		for _, p := range ps {
			if p == ix.commit {
				metJ = true
			}
			if !seen[p] {
				seen[p] = true
				stack = append(stack, p)
			}
		}
	}
	if !metJ {
		return walked, false, nil
	}
	runs, err := b.readRuns(met)
	if err != nil {
		return walked, false, err
	}
	for _, r := range runs {
		if err := ix.add(r); err != nil {
			return walked, false, err
		}
	}
	ix.commit = tip
	return walked, true, nil
}

// buildDocs computes the index of tip from nothing: every run its journal
// records.
func (b viewBuilder) buildDocs(tip gitstore.OID) (*docIndex, error) {
	runs, err := b.allRuns([]gitstore.OID{tip}, "")
	if err != nil {
		return nil, err
	}
	ix := &docIndex{commit: tip, docs: map[string]docLast{}}
	for _, r := range runs {
		if err := ix.add(r); err != nil {
			return nil, err
		}
	}
	return ix, nil
}

// insertOutcome is what insertRun found.
type insertOutcome int

const (
	inserted    insertOutcome = iota
	insertClash               // a name clash the run's insertion could change: fold every run
	insertStale               // the index disagrees with the view: rebuild it
)

// insertRun returns tree (the view of the runs of a journal commit whose
// newest run is newest, and whose index is ix) with r inserted, r sorting
// before newest: each document r delivers shows r's snapshot unless a run
// that sorts after r delivered it. That holds only where no name clash
// ('~', a file where r needs a directory or the reverse) lies on r's
// paths: then every document r names is at its plain name in tree and
// stays there, and r changes no other name. It reports insertClash
// otherwise, and insertStale when ix disagrees with tree.
func (b viewBuilder) insertRun(ix *docIndex, tree gitstore.OID, newest runKey, r viewRun) (gitstore.OID, insertOutcome, error) {
	type doc struct {
		segs []string
		name string
		snap gitstore.OID
	}
	docs := make([]doc, len(r.entries))
	prefixes := map[string]bool{}
	for i, e := range r.entries {
		segs, err := r.entryPath(e)
		if err != nil {
			return "", 0, err
		}
		docs[i] = doc{segs: segs, name: docName(segs), snap: gitstore.OID(e.Snapshot)}
		for j := 3; j < len(segs); j++ {
			prefixes[docName(segs[:j])] = true
		}
	}
	ed := b.editor(tree)
	checked := map[string]bool{}
	for _, d := range docs {
		if prefixes[d.name] {
			return "", insertClash, nil // r's own documents clash
		}
		if checked[d.name] {
			continue
		}
		checked[d.name] = true
		segs := d.segs
		// mode and id end as the lookup of segs itself (DocumentPath gives
		// at least documents/NS/PATH: the loop runs)
		var mode gitstore.Mode
		var id gitstore.OID
		for i := 2; i < len(segs); i++ {
			var err error
			if mode, id, err = ed.Lookup(segs[:i+1]...); err != nil {
				return "", 0, err
			}
			last := i == len(segs)-1
			if (!last && mode == gitstore.ModeFile) || (last && mode == gitstore.ModeDir) {
				return "", insertClash, nil
			}
			tilde := append(append([]string(nil), segs[:i]...), segs[i]+"~")
			if tm, _, err := ed.Lookup(tilde...); err != nil {
				return "", 0, err
			} else if tm != 0 {
				return "", insertClash, nil
			}
		}
		cur, ok := ix.docs[d.name]
		switch {
		case ok && (mode != gitstore.ModeFile || id != cur.snap || newest.less(cur.key)):
			return "", insertStale, nil
		case !ok && mode != 0:
			return "", insertStale, nil
		}
	}
	for _, d := range docs {
		if cur, ok := ix.docs[d.name]; ok && r.key.less(cur.key) {
			continue // a run after r delivered it
		}
		if err := ed.Set(d.snap, d.segs...); err != nil {
			return "", 0, fmt.Errorf("journal view: manifest %s: %w", r.key.manifest, err)
		}
	}
	// run.json keeps naming newest, which sorts after r.
	t, err := ed.Write()
	return t, inserted, err
}

// lateWalk bounds the walk that first looks for the few runs a late run
// of two writers at once sorts before, so that it is folded with them
// without reading or writing the index (whose cost grows with the
// documents: 15 ms at 10,000).
const lateWalk = 4

// insert computes the view of tip's runs plus r, which sorts before
// newest, the newest run of tip's view tree. It tries, in turn: the runs
// after r folded onto an older view, when they are one to three (two
// writers at once: suffix); the index kept, brought forward a few commits;
// the same fold when the runs after r are a few; the index kept, brought
// forward further; an index built from every run. It reports false when a
// name clash leaves the caller to fold the runs after r again.
func (b viewBuilder) insert(tip, tree gitstore.OID, newest runKey, r viewRun) (gitstore.OID, bool, error) {
	if t, ok, err := b.suffix(tip, r, min(lateWalk, b.shortWalk)); err != nil || ok {
		return t, ok, err
	}
	kept := b.docs.load()
	try := func(ix *docIndex, walked int) (gitstore.OID, insertOutcome, error) {
		t, out, err := b.insertRun(ix, tree, newest, r)
		if err == nil && out != insertStale && walked > 0 {
			b.docs.save(ix)
		}
		return t, out, err
	}
	// fromKept brings the index kept forward by a walk of at most budget
	// commits and inserts r with it; done says its answer is final. An
	// index the view contradicts is forgotten.
	fromKept := func(budget int) (t gitstore.OID, ok, done bool, err error) {
		if kept == nil {
			return "", false, false, nil
		}
		n, forward, err := b.bringForward(kept, tip, budget)
		if err != nil || !forward {
			return "", false, err != nil, err
		}
		t, out, err := try(kept, n)
		if err != nil || out != insertStale {
			return t, out == inserted, true, err
		}
		kept = nil
		b.docs.save(nil)
		return "", false, false, nil
	}
	if t, ok, done, err := fromKept(b.shortWalk); done {
		return t, ok, err
	}
	if t, ok, err := b.suffix(tip, r, b.shortWalk); err != nil || ok {
		return t, ok, err
	}
	if t, ok, done, err := fromKept(suffixBudget); done {
		return t, ok, err
	}
	ix, err := b.buildDocs(tip)
	if err != nil {
		return "", false, err
	}
	t, out, err := try(ix, 1)
	return t, out == inserted, err
}
