package store

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/readproof/readproof/gitstore"
	"github.com/readproof/readproof/identity"
	"github.com/readproof/readproof/manifest"
)

// The journal view (docs/store-format.md, "Journal"): every journal commit
// of format 2 carries a tree that shows each document as the runs recorded
// so far last delivered it,
//
//	documents/<namespace>/<path segments...>[@<tag>]   the snapshot blob
//	run.json                                             the newest run
//
// The view is derived data: it is a function of the set of runs the journal
// records (their manifests), folded in run order (manifest created_at, then
// run id, then manifest id). Two stores holding the same runs compute the
// same tree, byte for byte.

const (
	// JournalFormatVersion is the store format whose journal carries the
	// document view (docs/store-format.md): 2. Stores of format 1 have the
	// empty tree on every journal commit; `readproof migrate` converts them.
	JournalFormatVersion = 2
	// ViewFormat is the format of run.json in a journal view.
	ViewFormat = "readproof-journal-view/1"
	// ViewIndexFile names the newest run of the view.
	ViewIndexFile = "run.json"
	// ViewDocumentsDir holds the documents.
	ViewDocumentsDir = "documents"
	// journalRebuildMessage is the first line of the journal commit that
	// `readproof migrate` writes: it records no run and sets the view.
	journalRebuildMessage = "rebuild journal view"
)

// viewIndex is run.json: the newest run of the view in run order.
type viewIndex struct {
	Format    string    `json:"format"`
	RunID     string    `json:"run_id"`
	Manifest  string    `json:"manifest"`
	CreatedAt time.Time `json:"created_at"`
}

// runKey orders runs in the view.
type runKey struct {
	at       time.Time
	run      string
	manifest gitstore.OID
}

func (a runKey) less(b runKey) bool {
	if !a.at.Equal(b.at) {
		return a.at.Before(b.at)
	}
	if a.run != b.run {
		return a.run < b.run
	}
	return a.manifest < b.manifest
}

func (v *viewIndex) key() runKey {
	return runKey{at: v.CreatedAt, run: v.RunID, manifest: gitstore.OID(v.Manifest)}
}

// viewRun is what the view needs of one manifest.
type viewRun struct {
	key     runKey
	entries []manifest.Entry
}

// viewManifest is the part of manifest.json the view reads. The manifests
// a journal records were checked when they were written or pulled, so the
// view decodes only these fields (strict decoding costs more than the rest
// of a merge).
type viewManifest struct {
	RunID     string    `json:"run_id"`
	CreatedAt time.Time `json:"created_at"`
	Entries   []struct {
		Position int    `json:"position"`
		URI      string `json:"uri"`
		Ref      string `json:"ref"`
		Snapshot string `json:"snapshot"`
	} `json:"entries"`
}

func readViewRun(g gitstore.Reader, id gitstore.OID) (viewRun, error) {
	c, err := g.Commit(id)
	if err != nil {
		return viewRun{}, fmt.Errorf("journal view: manifest %s: %w", id, err)
	}
	blob, err := gitstore.FileAt(g, c.Tree, "manifest.json")
	if err != nil {
		return viewRun{}, fmt.Errorf("journal view: manifest %s: %w", id, err)
	}
	data, err := g.BlobAtMost(blob, manifest.MaxBytes)
	if err != nil {
		return viewRun{}, fmt.Errorf("journal view: manifest %s: manifest.json: %w", id, err)
	}
	r, err := decodeViewRun(data, id)
	if err != nil {
		return viewRun{}, fmt.Errorf("journal view: manifest %s: %w", id, err)
	}
	return r, nil
}

// decodeViewRun reads what the view needs of manifest.json.
func decodeViewRun(data []byte, id gitstore.OID) (viewRun, error) {
	var vm viewManifest
	if err := json.Unmarshal(data, &vm); err != nil {
		return viewRun{}, err
	}
	if err := identity.ValidateRunID(vm.RunID); err != nil {
		return viewRun{}, err
	}
	entries := make([]manifest.Entry, len(vm.Entries))
	for i, e := range vm.Entries {
		entries[i] = manifest.Entry{Position: e.Position, URI: e.URI, Ref: e.Ref, Snapshot: e.Snapshot}
	}
	return newViewRun(id, vm.CreatedAt, vm.RunID, entries), nil
}

// newViewRun is manifest id's run, its entries (which it sorts in place)
// in position order.
func newViewRun(id gitstore.OID, createdAt time.Time, runID string, entries []manifest.Entry) viewRun {
	sort.SliceStable(entries, func(i, j int) bool { return entries[i].Position < entries[j].Position })
	return viewRun{key: runKey{at: createdAt.UTC(), run: runID, manifest: id}, entries: entries}
}

// DocumentPath returns the path in a journal view where the document
// delivered for uri (mounted by tag when tag is not empty) lives when no
// other document claims the name first: documents/NS/PATH[@TAG]. The
// identity rules keep every segment a valid tree name that never contains
// '~', '@' or '+', so the '~' that resolves a clash (applyRun) and the '@'
// of a tag never meet a document's own name.
func DocumentPath(uri, tag string) ([]string, error) {
	u, err := identity.ParseURI(uri)
	if err != nil {
		return nil, err
	}
	if u.Tag != "" {
		return nil, fmt.Errorf("journal view: %q carries a tag: give the tag apart", uri)
	}
	segs := append([]string{ViewDocumentsDir, u.Namespace}, strings.Split(u.Path, "/")...)
	if tag != "" {
		if err := identity.ValidateTag(tag); err != nil {
			return nil, err
		}
		segs[len(segs)-1] += "@" + tag
	}
	return segs, nil
}

// resolveDocument applies the clash rule to a document path in the view
// being edited: a directory name that an earlier document holds as a file
// is used with '~' appended (every later document below it goes there too),
// and a file name that an earlier document holds as a directory gets '~'
// appended. Documents are never removed, so a name once taken keeps its
// kind, and the outcome depends only on the order of runs.
func resolveDocument(ed *gitstore.TreeEditor, segs []string) error {
	for i := 2; i < len(segs); i++ {
		mode, _, err := ed.Lookup(segs[:i+1]...)
		if err != nil {
			return err
		}
		last := i == len(segs)-1
		if (!last && mode == gitstore.ModeFile) || (last && mode == gitstore.ModeDir) {
			segs[i] += "~"
		}
	}
	return nil
}

// entryPath is the document path in the view of r's entry e
// (DocumentPath), its snapshot checked to be an object id.
func (r viewRun) entryPath(e manifest.Entry) ([]string, error) {
	segs, err := DocumentPath(e.URI, e.Ref)
	if err != nil {
		return nil, fmt.Errorf("journal view: manifest %s entry %d: %w", r.key.manifest, e.Position, err)
	}
	if !identity.IsObjectID(e.Snapshot) {
		return nil, fmt.Errorf("journal view: manifest %s entry %d: snapshot %q is not an object id", r.key.manifest, e.Position, e.Snapshot)
	}
	return segs, nil
}

// applyRun folds one run's documents into the view being edited: each
// entry in position order sets its document to the entry's snapshot.
func applyRun(ed *gitstore.TreeEditor, r viewRun) error {
	for _, e := range r.entries {
		segs, err := r.entryPath(e)
		if err != nil {
			return err
		}
		if err := resolveDocument(ed, segs); err != nil {
			return err
		}
		if err := ed.Set(gitstore.OID(e.Snapshot), segs...); err != nil {
			return fmt.Errorf("journal view: manifest %s entry %d: %w", r.key.manifest, e.Position, err)
		}
	}
	return nil
}

func encodeViewIndex(k runKey) ([]byte, error) {
	data, err := json.MarshalIndent(viewIndex{Format: ViewFormat, RunID: k.run, Manifest: string(k.manifest), CreatedAt: k.at.UTC()}, "", "  ")
	if err != nil {
		return nil, err
	}
	return append(data, '\n'), nil
}

// viewKind says what a journal commit's tree is.
type viewKind int

const (
	viewNone  viewKind = iota // format 1: the empty tree on a journal that records runs
	viewEmpty                 // no runs yet: the empty tree on the journal's root
	viewOK                    // a view with run.json
	viewBad                   // a non-empty tree whose run.json does not decode
)

// viewState reads what the tree of journal commit id holds.
func viewState(g gitstore.Reader, id gitstore.OID) (viewKind, gitstore.Commit, *viewIndex, error) {
	c, err := g.Commit(id)
	if err != nil {
		return viewBad, c, nil, fmt.Errorf("journal %s: %w", id, err)
	}
	if c.Tree == EmptyTree {
		if len(c.Parents) == 0 {
			return viewEmpty, c, nil, nil
		}
		return viewNone, c, nil, nil
	}
	idx, err := readViewIndex(g, c.Tree)
	if err != nil {
		return viewBad, c, nil, nil
	}
	return viewOK, c, idx, nil
}

func readViewIndex(g gitstore.Reader, tree gitstore.OID) (*viewIndex, error) {
	blob, err := gitstore.FileAt(g, tree, ViewIndexFile)
	if err != nil {
		return nil, err
	}
	// a few hundred bytes; one a remote wrote is refused over the bound
	// on a record before it is inflated
	data, err := g.BlobAtMost(blob, MaxBytesOf(ViewIndexFile))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", ViewIndexFile, err)
	}
	return decodeViewIndex(data)
}

// decodeViewIndex parses run.json strictly.
func decodeViewIndex(data []byte) (*viewIndex, error) {
	var idx viewIndex
	dec := json.NewDecoder(strings.NewReader(string(data)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&idx); err != nil {
		return nil, fmt.Errorf("%s: %w", ViewIndexFile, err)
	}
	if idx.Format != ViewFormat || !identity.IsObjectID(idx.Manifest) {
		return nil, fmt.Errorf("%s: not a %s index", ViewIndexFile, ViewFormat)
	}
	return &idx, nil
}

// journalEdges returns the journal parents of a journal commit and the
// manifest it records ("" for none). A commit that is not a journal record
// has no journal parents.
func journalEdges(c gitstore.Commit) ([]gitstore.OID, gitstore.OID) {
	if !IsJournalCommit(c) {
		return nil, ""
	}
	head, _, _ := strings.Cut(c.Message, "\n")
	n := len(c.Parents)
	switch {
	case strings.HasPrefix(head, "record run "):
		return c.Parents[:n-1], c.Parents[n-1]
	case strings.HasPrefix(head, journalCheckPrefix):
		return c.Parents[:1], ""
	}
	return c.Parents, ""
}

// journalWalk returns every journal commit reachable from heads along
// journal edges that records a manifest, with the manifest it records.
func journalWalk(g gitstore.Reader, heads ...gitstore.OID) (map[gitstore.OID]gitstore.OID, error) {
	records := map[gitstore.OID]gitstore.OID{}
	err := eachJournalCommit(g, heads, func(id gitstore.OID, _ gitstore.Commit, m gitstore.OID) bool {
		if m != "" {
			records[id] = m
		}
		return false
	})
	if err != nil {
		return nil, fmt.Errorf("journal view: %w", err)
	}
	return records, nil
}

// eachJournalCommit calls visit once with each commit reachable from heads
// ("" ones skipped) along journal edges (journalEdges), with the manifest
// it records ("" for none), depth first, until visit returns true.
func eachJournalCommit(g gitstore.Reader, heads []gitstore.OID, visit func(id gitstore.OID, c gitstore.Commit, manifest gitstore.OID) (stop bool)) error {
	seen := map[gitstore.OID]bool{}
	stack := []gitstore.OID{}
	for _, h := range heads {
		if !seen[h] && h != "" {
			seen[h] = true
			stack = append(stack, h)
		}
	}
	for len(stack) > 0 {
		id := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		c, err := g.Commit(id)
		if err != nil {
			return fmt.Errorf("read journal commit %s: %w", id, err)
		}
		ps, m := journalEdges(c)
		if visit(id, c, m) {
			return nil
		}
		for _, p := range ps {
			if !seen[p] {
				seen[p] = true
				stack = append(stack, p)
			}
		}
	}
	return nil
}

// viewBuilder computes views; put is PutTree (writing) or HashTree
// (checking), putBlob likewise.
type viewBuilder struct {
	g       gitstore.Reader
	editor  func(root gitstore.OID) *gitstore.TreeEditor
	putBlob func([]byte) (gitstore.OID, error)
	// known is a manifest the caller holds decoded (the one it just
	// wrote), so it is not read back.
	known *viewRun
	// docs keeps the document index between journal commits (viewdocs.go);
	// nil: a run recorded out of order folds the runs after it (suffix),
	// or every run.
	docs docSource
	// shortWalk bounds the walks that come before (re)building the index.
	shortWalk int
}

// withDocs gives the builder a document index kept in docs, walking at
// most shortWalk journal commits before it rebuilds the index.
func (b viewBuilder) withDocs(docs docSource, shortWalk int) viewBuilder {
	b.docs, b.shortWalk = docs, shortWalk
	return b
}

// withRun gives the builder manifest id, already decoded as m.
func (b viewBuilder) withRun(id gitstore.OID, m *manifest.Manifest) viewBuilder {
	if m == nil {
		return b
	}
	entries := m.Entries
	if !sort.SliceIsSorted(entries, func(i, j int) bool { return entries[i].Position < entries[j].Position }) {
		// newViewRun sorts them: m's own stay as they are. A manifest a
		// run just wrote is in position order already, and its entries
		// (10,000 of them: 1.8 MB) are only read, not copied.
		entries = append([]manifest.Entry(nil), entries...)
	}
	r := newViewRun(id, m.CreatedAt, m.RunID, entries)
	b.known = &r
	return b
}

func (b viewBuilder) readRun(id gitstore.OID) (viewRun, error) {
	if b.known != nil && b.known.key.manifest == id {
		return *b.known, nil
	}
	return readViewRun(b.g, id)
}

func writingBuilder(g gitstore.Store) viewBuilder {
	return viewBuilder{g: g, putBlob: g.PutBlob, editor: func(root gitstore.OID) *gitstore.TreeEditor { return gitstore.NewTreeEditor(g, root) }}
}

func hashingBuilder(g gitstore.Reader) viewBuilder {
	b := viewBuilder{g: g, putBlob: hashBlob, editor: func(root gitstore.OID) *gitstore.TreeEditor { return gitstore.NewTreeHasher(g, root) }}
	if cr, ok := g.(*cachingReader); ok {
		// a pull checking many journal commits keeps the index in memory
		b = b.withDocs(&cr.docs, walkBudget(cr.viewWalk))
	}
	return b
}

// fold applies runs in run order onto root (the view of runs that all sort
// before them).
func (b viewBuilder) fold(root gitstore.OID, runs []viewRun) (gitstore.OID, error) {
	sort.Slice(runs, func(i, j int) bool { return runs[i].key.less(runs[j].key) })
	if root == EmptyTree {
		root = ""
	}
	ed := b.editor(root)
	for _, r := range runs {
		if err := applyRun(ed, r); err != nil {
			return "", err
		}
	}
	if len(runs) > 0 {
		// run.json names the newest run.
		data, err := encodeViewIndex(runs[len(runs)-1].key)
		if err != nil {
			return "", err
		}
		blob, err := b.putBlob(data)
		if err != nil {
			return "", err
		}
		if err := ed.Set(blob, ViewIndexFile); err != nil {
			return "", err
		}
	}
	return ed.Write()
}

// readRuns reads the manifests, each once.
func (b viewBuilder) readRuns(ms map[gitstore.OID]bool) ([]viewRun, error) {
	ids := make([]gitstore.OID, 0, len(ms))
	for m := range ms {
		ids = append(ids, m)
	}
	sort.Slice(ids, func(i, j int) bool { return ids[i] < ids[j] })
	runs := make([]viewRun, 0, len(ids))
	for _, m := range ids {
		r, err := b.readRun(m)
		if err != nil {
			return nil, err
		}
		runs = append(runs, r)
	}
	return runs, nil
}

// full computes the view of every run the journal records from heads,
// plus extra, from nothing.
func (b viewBuilder) full(heads []gitstore.OID, extra gitstore.OID) (gitstore.OID, error) {
	tree, _, err := b.fullCount(heads, extra)
	return tree, err
}

func (b viewBuilder) fullCount(heads []gitstore.OID, extra gitstore.OID) (gitstore.OID, int, error) {
	runs, err := b.allRuns(heads, extra)
	if err != nil {
		return "", 0, err
	}
	tree, err := b.fold("", runs)
	return tree, len(runs), err
}

// allRuns reads every run the journal records from heads, plus extra
// ("" for none), each manifest once.
func (b viewBuilder) allRuns(heads []gitstore.OID, extra gitstore.OID) ([]viewRun, error) {
	records, err := journalWalk(b.g, heads...)
	if err != nil {
		return nil, err
	}
	ms := map[gitstore.OID]bool{}
	for _, m := range records {
		ms[m] = true
	}
	if extra != "" {
		ms[extra] = true
	}
	return b.readRuns(ms)
}

// tree returns the tree of a journal commit whose journal parents are
// parents and which records manifest record ("" for a commit that records
// no run: a check, a rename, a merge). It reads only what changed where it
// can: a run that sorts after every run of its parent's view is applied to
// that view, touching only the trees of the documents it changed; a merge
// folds the runs new on either side onto the view of their merge base. A
// journal still in format 1 (empty trees) stays so until `readproof
// migrate`; a merge with a side in format 2 computes the whole view.
func (b viewBuilder) tree(parents []gitstore.OID, record gitstore.OID) (gitstore.OID, error) {
	switch len(parents) {
	case 0:
		if record == "" {
			return EmptyTree, nil
		}
		r, err := b.readRun(record)
		if err != nil {
			return "", err
		}
		return b.fold("", []viewRun{r})
	case 1:
		kind, c, idx, err := viewState(b.g, parents[0])
		if err != nil {
			return "", err
		}
		switch kind {
		case viewNone:
			return EmptyTree, nil
		case viewBad:
			return b.full(parents, record)
		}
		if record == "" {
			return c.Tree, nil
		}
		r, err := b.readRun(record)
		if err != nil {
			return "", err
		}
		if idx != nil && !idx.key().less(r.key) {
			// Recorded out of run order (a concurrent writer that
			// committed first, a clock behind another store's): insert
			// it with the document index, or fold it again with the runs
			// that sort after it.
			if b.docs != nil && r.key.less(idx.key()) {
				if tree, ok, err := b.insert(parents[0], c.Tree, idx.key(), r); err != nil || ok {
					return tree, err
				}
				// a name clash: fold the runs after it, or every run
			}
			if tree, ok, err := b.suffix(parents[0], r, suffixBudget); err != nil || ok {
				return tree, err
			}
			return b.full(parents, record)
		}
		return b.fold(c.Tree, []viewRun{r})
	case 2:
		return b.merge(parents[0], parents[1], record)
	}
	return "", fmt.Errorf("journal view: %d journal parents", len(parents))
}

// suffixBudget bounds the journal commits suffix walks before it leaves
// the work to a whole recompute.
const suffixBudget = 4096

// suffix computes the view of tip's runs plus r, a run that sorts before
// tip's newest, from the newest view whose runs all sort before r: it walks
// back from tip along journal edges, stopping at commits whose newest run
// sorts before r, and when exactly one such commit X bounds the walk and
// every run met on the way sorts after all of X's, folds those runs and r
// onto X's view. It reports false when the history does not have that
// shape, or the walk meets more than budget commits (the caller then folds
// every run).
func (b viewBuilder) suffix(tip gitstore.OID, r viewRun, budget int) (gitstore.OID, bool, error) {
	var frontier []gitstore.OID
	met := map[gitstore.OID]bool{}
	seen := map[gitstore.OID]bool{tip: true}
	stack := []gitstore.OID{tip}
	for len(stack) > 0 {
		if len(seen) > budget {
			return "", false, nil
		}
		id := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		kind, c, idx, err := viewState(b.g, id)
		if err != nil {
			return "", false, err
		}
		switch {
		case kind == viewEmpty, kind == viewOK && idx.key().less(r.key):
			frontier = append(frontier, id)
			continue
		case kind != viewOK:
			return "", false, nil
		}
		ps, m := journalEdges(c)
		if m != "" {
			met[m] = true
		}
		for _, p := range ps {
			if !seen[p] {
				seen[p] = true
				stack = append(stack, p)
			}
		}
	}
	if len(frontier) != 1 {
		return "", false, nil
	}
	_, base, idx, err := viewState(b.g, frontier[0])
	if err != nil {
		return "", false, err
	}
	runs, err := b.readRuns(met)
	if err != nil {
		return "", false, err
	}
	// r sorts after idx's run: the frontier stopped the walk there
	return b.foldAfter(base.Tree, idx, append(runs, r))
}

// foldAfter folds runs onto the view tree whose newest run is idx's (nil:
// none) when every run sorts after that one, and reports false, folding
// nothing, when one does not.
func (b viewBuilder) foldAfter(tree gitstore.OID, idx *viewIndex, runs []viewRun) (gitstore.OID, bool, error) {
	for _, r := range runs {
		if idx != nil && !idx.key().less(r.key) {
			return "", false, nil
		}
	}
	tree, err := b.fold(tree, runs)
	return tree, err == nil, err
}

func (b viewBuilder) merge(x, y, record gitstore.OID) (gitstore.OID, error) {
	kx, _, _, err := viewState(b.g, x)
	if err != nil {
		return "", err
	}
	ky, _, _, err := viewState(b.g, y)
	if err != nil {
		return "", err
	}
	if record == "" && (kx == viewNone || kx == viewEmpty) && (ky == viewNone || ky == viewEmpty) {
		return EmptyTree, nil // neither side has a view: format 1 stays
	}
	if tree, ok, err := b.converge(x, y, record); err != nil || ok {
		return tree, err
	}
	return b.full([]gitstore.OID{x, y}, record)
}

// walkItem is a journal commit waiting in converge's walk.
type walkItem struct {
	id   gitstore.OID
	kind viewKind
	c    gitstore.Commit
	idx  *viewIndex
}

// converge finds the view a merge of x and y starts from without walking
// either journal to its root: it walks back from both tips, newest view
// first (a commit's newest run never sorts before its parents'), until a
// single commit X is left to visit. Then the runs of both sides are X's
// runs and the runs of the commits visited; when every visited run sorts
// after X's newest, the merge is those runs folded onto X's view. Otherwise
// (a run recorded out of order) the walk goes on below X. It reports false
// when it reaches a commit without a view or the walk budget.
func (b viewBuilder) converge(x, y, record gitstore.OID) (gitstore.OID, bool, error) {
	var queue []walkItem
	seen := map[gitstore.OID]bool{}
	push := func(id gitstore.OID) error {
		if seen[id] {
			return nil
		}
		seen[id] = true
		kind, c, idx, err := viewState(b.g, id)
		if err != nil {
			return err
		}
		queue = append(queue, walkItem{id: id, kind: kind, c: c, idx: idx})
		return nil
	}
	if err := push(x); err != nil {
		return "", false, err
	}
	if err := push(y); err != nil {
		return "", false, err
	}
	// The runs met, each read once: a walk behind a run stamped ahead of
	// the local clock reaches one commit at a time for as long as the
	// runs met sort before that run (every local run since), and reading
	// them all again at each such commit cost k^2/2 manifests.
	var runs []viewRun
	var oldest *runKey
	met := map[gitstore.OID]bool{}
	unread := map[gitstore.OID]bool{}
	if record != "" {
		met[record], unread[record] = true, true
	}
	for len(queue) > 0 {
		if len(seen) > 4*suffixBudget {
			return "", false, nil
		}
		for _, q := range queue {
			if q.kind != viewOK && q.kind != viewEmpty {
				return "", false, nil
			}
		}
		if len(queue) == 1 {
			base := queue[0]
			more, err := b.readRuns(unread)
			if err != nil {
				return "", false, err
			}
			clear(unread)
			for i := range more {
				if oldest == nil || more[i].key.less(*oldest) {
					oldest = &more[i].key
				}
			}
			runs = append(runs, more...)
			if base.idx == nil || oldest == nil || base.idx.key().less(*oldest) {
				// every run met sorts after base's newest
				tree, err := b.fold(base.c.Tree, runs)
				return tree, err == nil, err
			}
		}
		// Visit the commit with the newest view.
		top := 0
		for i, q := range queue {
			if q.idx != nil && (queue[top].idx == nil || queue[top].idx.key().less(q.idx.key())) {
				top = i
			}
		}
		q := queue[top]
		queue = append(queue[:top], queue[top+1:]...)
		ps, m := journalEdges(q.c)
		if m != "" && !met[m] {
			met[m], unread[m] = true, true
		}
		for _, p := range ps {
			if err := push(p); err != nil {
				return "", false, err
			}
		}
	}
	return "", false, nil
}

// JournalTree returns the tree of a new journal commit (docs/store-format.md,
// "Journal"): parents are its journal parents (none, the previous tip, or
// the two tips a merge joins) and record is the manifest it records, or ""
// when it records none. It writes the trees it needs into g.
func JournalTree(g gitstore.Store, parents []gitstore.OID, record gitstore.OID) (gitstore.OID, error) {
	return writingBuilder(g).tree(parents, record)
}

// ExpectedJournalTree returns, without writing anything, the tree journal
// commit id should carry: the view of every run its journal records,
// computed from its journal parents as a writer computes it (so a format-1
// commit expects the empty tree).
func ExpectedJournalTree(g gitstore.Reader, id gitstore.OID) (gitstore.OID, error) {
	c, err := g.Commit(id)
	if err != nil {
		return "", err
	}
	ps, m := journalEdges(c)
	head, _, _ := strings.Cut(c.Message, "\n")
	if head == journalRebuildMessage {
		return hashingBuilder(g).full(ps, "")
	}
	return hashingBuilder(g).tree(ps, m)
}

// FullJournalTree returns, without writing anything, the view of every run
// the journal at tip records, computed from nothing.
func FullJournalTree(g gitstore.Reader, tip gitstore.OID) (gitstore.OID, error) {
	return hashingBuilder(g).full([]gitstore.OID{tip}, "")
}

// JournalFormat says which format the journal at tip is in: 2 when its tree
// is a view (or it records nothing yet), 1 when it records runs with the
// empty tree. `readproof migrate` brings a format-1 journal to format 2.
func JournalFormat(g gitstore.Reader, tip gitstore.OID) (int, error) {
	kind, _, _, err := viewState(g, tip)
	if err != nil {
		return 0, err
	}
	if kind == viewNone {
		return 1, nil
	}
	return 2, nil
}

func hashBlob(data []byte) (gitstore.OID, error) {
	return gitstore.HashObject("blob", data), nil
}

// CachingReader wraps g for a caller that computes many views in a row (a
// pull checking each new journal commit): trees and commits, which never
// change, are read once. Blobs are not cached. It is not safe for
// concurrent use.
func CachingReader(g gitstore.Reader) gitstore.Reader {
	return &cachingReader{Reader: g, trees: map[gitstore.OID][]gitstore.TreeEntry{}, commits: map[gitstore.OID]gitstore.Commit{}}
}

type cachingReader struct {
	gitstore.Reader
	trees   map[gitstore.OID][]gitstore.TreeEntry
	commits map[gitstore.OID]gitstore.Commit
	// docs is the document index of the last journal commit whose run
	// was inserted out of order (viewdocs.go).
	docs memDocs
	// viewWalk, when tests set it, replaces viewShortWalk (negative: 0).
	viewWalk int
}

// cacheLimit bounds each cache; past it the cache starts over.
const cacheLimit = 1 << 16

func (c *cachingReader) Tree(id gitstore.OID) ([]gitstore.TreeEntry, error) {
	return readCached(c.trees, id, c.Reader.Tree)
}

// Commit reads a commit once; one larger than any commit readproof writes
// (manifest.MaxBytes) is refused from its header, unread: the commits a
// pull checks come from the remote, and a message of hundreds of megabytes
// is a few on the wire.
func (c *cachingReader) Commit(id gitstore.OID) (gitstore.Commit, error) {
	return readCached(c.commits, id, func(id gitstore.OID) (gitstore.Commit, error) {
		if err := gitstore.CheckObjectSize(c.Reader, id, manifest.MaxBytes); err != nil {
			return gitstore.Commit{}, err
		}
		return c.Reader.Commit(id)
	})
}

// readCached is m[id], read with read and kept when not there yet.
func readCached[V any](m map[gitstore.OID]V, id gitstore.OID, read func(gitstore.OID) (V, error)) (V, error) {
	if v, ok := m[id]; ok {
		return v, nil
	}
	v, err := read(id)
	if err == nil {
		if len(m) >= cacheLimit {
			clear(m)
		}
		m[id] = v
	}
	return v, err
}
