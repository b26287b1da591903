package receipts

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	"github.com/readproof/readproof/gitstore/gitobj"
	"github.com/readproof/readproof/identity"
)

// Ref layout (docs/receipts.md, "Storage"). Every receipt is stored twice,
// as the same blob: in its session's chain (listing, omissions) and in one of
// 32 index chains chosen by the first random digit of its id (lookup by id
// alone). Both refs move in one compare-and-swap transaction.
const (
	RefPrefix        = "refs/heads/readproof/receipts/"
	SessionRefPrefix = RefPrefix + "sessions/"
	IndexRefPrefix   = RefPrefix + "index/"
)

var (
	// ErrNotFound is returned by Get for an id no receipt has.
	ErrNotFound = errors.New("no such receipt")
	// ErrCorrupt is returned when a stored receipt cannot be decoded or is
	// stored under another id: the store was edited.
	ErrCorrupt = errors.New("stored receipt is corrupt")
	// ErrExists is returned by Append for an id already stored with other
	// content.
	ErrExists = errors.New("receipt id already stored with other content")
	// ErrBusy is returned by Append when the compare-and-swap loop gave up.
	ErrBusy = errors.New("receipt store too busy")
)

// appendAttempts counts compare-and-swap attempts, for tests.
var appendAttempts atomic.Int64

// SessionRef is the ref holding a session's receipt chain.
func SessionRef(session string) string { return SessionRefPrefix + session }

func indexRef(id string) string { return IndexRefPrefix + id[len(IDPrefix):len(IDPrefix)+1] }

// sessionPath and indexPath are the tree paths of a receipt's blob: two
// fan-out levels of one base32 digit each (32 x 32 directories), then
// <id>.json. The index skips the digit that already picked the ref.
func sessionPath(id string) []string {
	d := id[len(IDPrefix):]
	return []string{d[0:1], d[1:2], id + ".json"}
}

func indexPath(id string) []string {
	d := id[len(IDPrefix):]
	return []string{d[1:2], d[2:3], id + ".json"}
}

// Ledger stores receipts in a gitobj.Store. It is safe for concurrent use
// by several goroutines and several processes sharing one store.
type Ledger struct {
	store gitobj.Store
	// MaxAttempts bounds the compare-and-swap attempts of one Append
	// (default 500).
	MaxAttempts int
	// Now is the clock for commit times; time.Now when nil.
	Now func() time.Time
	// Bind, when set, binds a receipt of a run to the run its run id
	// names in this store (see Binding); it is asked once per Append, and
	// a zero Binding (the run is unknown here, or could not be read) leaves
	// the receipt unbound.
	Bind func(run string) Binding
}

// NewLedger returns a Ledger on store.
func NewLedger(store gitobj.Store) *Ledger { return &Ledger{store: store} }

// Append stores r durably: its session chain and its index chain each get
// a new commit whose tree adds the receipt's canonical JSON, and both refs
// move in one transaction. Concurrent appends from several processes all
// land (compare-and-swap with retries). Appending a receipt that is already
// stored with identical content is a no-op; an id stored with other content
// yields ErrExists. Append checks the format but not the MAC.
func (l *Ledger) Append(r Receipt) error { return l.appendCtx(context.Background(), r) }

func (l *Ledger) appendCtx(ctx context.Context, r Receipt) error {
	if err := r.Validate(); err != nil {
		return err
	}
	blob, err := l.store.PutBlob(r.Encode())
	if err != nil {
		return fmt.Errorf("storing receipt %s: %w", r.ID, err)
	}
	attempts := l.MaxAttempts
	if attempts <= 0 {
		attempts = 500
	}
	sref, iref := SessionRef(r.Session), indexRef(r.ID)
	// A version 2 receipt's append commits repeat the binding its MAC
	// covers; a version 1 receipt's are bound here, as before.
	bound := r.Bound
	if r.version() == Version && l.Bind != nil && r.Run != "" {
		bound = l.Bind(r.Run)
	}
	var last error
	for attempt := 0; attempt < attempts; attempt++ {
		if attempt > 0 {
			if err := backoff(ctx, attempt); err != nil {
				return fmt.Errorf("storing receipt %s: %w", r.ID, err)
			}
		}
		appendAttempts.Add(1)
		done, err := l.tryAppend(r, bound, blob, sref, iref)
		if err == nil {
			return nil
		}
		if done || !errors.Is(err, gitobj.ErrConflict) && !errors.Is(err, gitobj.ErrLocked) {
			return fmt.Errorf("storing receipt %s in session %q: %w", r.ID, r.Session, err)
		}
		last = err
	}
	return fmt.Errorf("storing receipt %s: %w: %d attempts lost the race for %s (last: %v); retry later", r.ID, ErrBusy, attempts, sref, last)
}

// backoff sleeps a random time up to 1ms doubled per attempt, capped at
// 50ms (full jitter), or until ctx is done.
func backoff(ctx context.Context, attempt int) error {
	ceiling := time.Millisecond << min(attempt, 6)
	ceiling = min(ceiling, 50*time.Millisecond)
	t := time.NewTimer(rand.N(ceiling) + time.Duration(rand.N(200))*time.Microsecond)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// tryAppend makes one compare-and-swap attempt. done reports a final
// outcome (success, already stored, or a non-retryable error).
//
// Each chain is updated only if it lacks the receipt, so an append retried
// after a crash between the two ref renames completes the missing half.
func (l *Ledger) tryAppend(r Receipt, bound Binding, blob gitobj.OID, sref, iref string) (done bool, err error) {
	var updates []gitobj.RefUpdate
	msg := appendMessage(r, bound)
	for _, c := range []struct {
		ref    string
		path   []string
		prefix string
	}{{sref, sessionPath(r.ID), ""}, {iref, indexPath(r.ID), "index "}} {
		tip, err := l.ref(c.ref)
		if err != nil {
			return true, err
		}
		tree, err := l.commitTree(tip)
		if err != nil {
			return true, err
		}
		have, ok, err := l.lookup(tree, c.path)
		if err != nil {
			return true, err
		}
		if ok {
			if have != blob {
				return true, fmt.Errorf("%w (in %s)", ErrExists, c.ref)
			}
			continue
		}
		newTree, err := l.insert(tree, c.path, blob)
		if err != nil {
			return true, err
		}
		commit, err := l.commit(newTree, tip, c.prefix+msg)
		if err != nil {
			return true, err
		}
		updates = append(updates, gitobj.RefUpdate{Name: c.ref, Old: tip, New: commit})
	}
	if len(updates) == 0 {
		return true, nil
	}
	return false, l.store.Update(updates...)
}

// appendMessage is the message of the commit that appends r to its
// session chain (the index chain's has "index " in front): the id on the
// first line, then the session, the tool and the binding, if any.
func appendMessage(r Receipt, bound Binding) string {
	return fmt.Sprintf("receipt %s\n\nsession: %s\ntool: %s\n", r.ID, r.Session, r.Tool) + bound.trailer()
}

func (l *Ledger) commit(tree, parent gitobj.OID, msg string) (gitobj.OID, error) {
	now := time.Now
	if l.Now != nil {
		now = l.Now
	}
	sig := gitobj.Signature{Name: "readproof", Email: "readproof@localhost", When: now().UTC()}
	c := gitobj.Commit{Tree: tree, Author: sig, Committer: sig, Message: msg}
	if parent != "" {
		c.Parents = []gitobj.OID{parent}
	}
	return l.store.PutCommit(c)
}

// ref reads a ref, "" when it does not exist.
func (l *Ledger) ref(name string) (gitobj.OID, error) {
	oid, err := l.store.Ref(name)
	if errors.Is(err, gitobj.ErrNotFound) {
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("reading ref %s: %w", name, err)
	}
	return oid, nil
}

func (l *Ledger) commitTree(c gitobj.OID) (gitobj.OID, error) {
	if c == "" {
		return "", nil
	}
	cm, err := l.store.Commit(c)
	if err != nil {
		return "", fmt.Errorf("reading receipt commit %s: %w", c, err)
	}
	return cm.Tree, nil
}

// lookup follows path from tree root and returns the object it names.
func (l *Ledger) lookup(root gitobj.OID, path []string) (gitobj.OID, bool, error) {
	cur := root
	for _, name := range path {
		if cur == "" {
			return "", false, nil
		}
		entries, err := l.store.Tree(cur)
		if err != nil {
			return "", false, fmt.Errorf("reading receipt tree %s: %w", cur, err)
		}
		next := gitobj.OID("")
		for _, e := range entries {
			if e.Name == name {
				next = e.OID
				break
			}
		}
		cur = next
	}
	return cur, cur != "", nil
}

// insert returns the id of tree root with blob added at path.
func (l *Ledger) insert(root gitobj.OID, path []string, blob gitobj.OID) (gitobj.OID, error) {
	var entries []gitobj.TreeEntry
	if root != "" {
		var err error
		if entries, err = l.store.Tree(root); err != nil {
			return "", fmt.Errorf("reading receipt tree %s: %w", root, err)
		}
		entries = slices.Clone(entries)
	}
	name := path[0]
	i := slices.IndexFunc(entries, func(e gitobj.TreeEntry) bool { return e.Name == name })
	var entry gitobj.TreeEntry
	if len(path) == 1 {
		entry = gitobj.TreeEntry{Name: name, Mode: gitobj.ModeFile, OID: blob}
	} else {
		child := gitobj.OID("")
		if i >= 0 && entries[i].Mode == gitobj.ModeDir {
			child = entries[i].OID
		}
		sub, err := l.insert(child, path[1:], blob)
		if err != nil {
			return "", err
		}
		entry = gitobj.TreeEntry{Name: name, Mode: gitobj.ModeDir, OID: sub}
	}
	if i >= 0 {
		entries[i] = entry
	} else {
		entries = append(entries, entry)
	}
	oid, err := l.store.PutTree(entries)
	if err != nil {
		return "", fmt.Errorf("writing receipt tree: %w", err)
	}
	return oid, nil
}

// Get returns the receipt with the given id, whatever its session, in a
// fixed number of object reads. It returns an error wrapping ErrNotFound when
// no receipt has that id and ErrCorrupt when the stored one is unreadable.
func (l *Ledger) Get(id string) (Receipt, error) {
	if !ValidID(id) {
		return Receipt{}, fmt.Errorf("receipt %q: %w (not a receipt id)", truncate(id, 80), ErrNotFound)
	}
	tip, err := l.ref(indexRef(id))
	if err != nil {
		return Receipt{}, err
	}
	tree, err := l.commitTree(tip)
	if err != nil {
		return Receipt{}, err
	}
	blob, ok, err := l.lookup(tree, indexPath(id))
	if err != nil {
		return Receipt{}, err
	}
	if !ok {
		return Receipt{}, fmt.Errorf("receipt %s: %w", id, ErrNotFound)
	}
	return l.readReceipt(id, blob)
}

// BindingOf returns the binding of a stored receipt (see Binding): the one
// its append commit on the index chain names, or zero for a receipt of no
// run and an unbound one. It walks the index chain's history from its tip
// until it finds that commit (merges' other parents too): about one commit
// per 32 receipts of the store that were appended after it. A commit
// naming the receipt that does not append it is reported, as Scan reports
// it, for a receipt of no run too.
//
// A version 2 receipt's binding is its own; its append commit's binding
// line is checked against it, and one that disagrees (or no append commit)
// is an error wrapping ErrBindingEdited, returned with the binding.
func (l *Ledger) BindingOf(r Receipt) (Binding, error) {
	if r.version() == BoundVersion {
		if !ValidID(r.ID) {
			return r.Bound, nil
		}
		msg, found, not, err := l.indexAppendMessage(r.ID)
		switch {
		case err != nil:
			return r.Bound, err
		case found:
			if err := CheckBindingLine(r, indexRef(r.ID), msg); err != nil {
				return r.Bound, err
			}
		case not == "":
			return r.Bound, errNoAppendCommit(r, indexRef(r.ID))
		}
		if not != "" {
			return r.Bound, errNotAppend(r.ID, r.Session, indexRef(r.ID), not)
		}
		return r.Bound, nil
	}
	if !ValidID(r.ID) {
		return Binding{}, nil
	}
	msg, _, not, err := l.indexAppendMessage(r.ID)
	if err != nil {
		return Binding{}, err
	}
	b := v1Binding(r, msg)
	if not != "" {
		return b, errNotAppend(r.ID, r.Session, indexRef(r.ID), not)
	}
	return b, nil
}

// v1Binding is the binding of version 1 receipt r whose append commit's
// message is msg: the commit's binding line, or none for a receipt of no
// run, whatever its commit says (a binding says which run of its run id a
// receipt was issued for, docs/receipts.md, "Storage"; readproof writes
// no line for a receipt of no run). Scan and BindingOf read it so.
func v1Binding(r Receipt, msg string) Binding {
	if r.Run == "" {
		return Binding{}
	}
	return parseBinding(msg)
}

// indexAppendMessage returns the message of the commit that appended
// receipt id to its index chain, found false when no commit does: the
// first commit naming it on its first line that a walk from the tip finds,
// first parents first (walkCommits), and that adds it to its parent's
// tree (or has none). A commit naming it that does not add it, or a merge
// naming it (no readproof writes either: its binding line would rebind the
// receipt), is passed over and said in not, "" when there is none.
func (l *Ledger) indexAppendMessage(id string) (msg string, found bool, not string, err error) {
	ref := indexRef(id)
	tip, err := l.ref(ref)
	if err != nil || tip == "" {
		return "", false, "", err
	}
	trees := newTreeCache(l.store.Tree)
	var visitErr error
	c, err := l.walkCommits([]gitobj.OID{tip}, map[gitobj.OID]bool{}, true, func(c gitobj.OID, cm gitobj.Commit) bool {
		got, ok, _ := appendLine(ref, cm.Message)
		if !ok || got != id {
			return false
		}
		why, err := l.notAppended(trees, cm, indexPath(id))
		if err != nil {
			visitErr = err
			return true
		}
		if why != "" {
			if not == "" {
				not = namesBut(c, why)
			}
			return false
		}
		msg = cm.Message
		return true
	})
	if err != nil {
		return "", false, "", fmt.Errorf("reading receipt commit %s: %w", c, err)
	}
	if visitErr != nil {
		return "", false, "", visitErr
	}
	return msg, msg != "", not, nil // an append's message is never empty
}

// walkCommits visits, depth first, the commits reachable from stack that
// visited (shared with the caller) does not hold yet, marking each, until
// visit (given each commit's id and the commit) returns true.
// firstParentFirst walks a commit's first parent, and all its history,
// before its others (which append commit of a receipt counts depends on
// it: TestAppendCommitFirstParentFirst); otherwise its last parent goes
// first. An unreadable commit ends the walk with its id and the error.
func (l *Ledger) walkCommits(stack []gitobj.OID, visited map[gitobj.OID]bool, firstParentFirst bool, visit func(gitobj.OID, gitobj.Commit) bool) (gitobj.OID, error) {
	return walkCommits(l.store.Commit, stack, visited, firstParentFirst, visit)
}

// walkCommits is Ledger.walkCommits reading each commit with read.
func walkCommits(read func(gitobj.OID) (gitobj.Commit, error), stack []gitobj.OID, visited map[gitobj.OID]bool, firstParentFirst bool, visit func(gitobj.OID, gitobj.Commit) bool) (gitobj.OID, error) {
	for len(stack) > 0 {
		c := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if visited[c] {
			continue
		}
		visited[c] = true
		cm, err := read(c)
		if err != nil {
			return c, err
		}
		if visit(c, cm) {
			return "", nil
		}
		if !firstParentFirst {
			stack = append(stack, cm.Parents...)
			continue
		}
		for i := len(cm.Parents) - 1; i >= 0; i-- {
			stack = append(stack, cm.Parents[i])
		}
	}
	return "", nil
}

// readReceipt reads and decodes the stored receipt id from blob. A blob
// over MaxEncodedLen bytes (a pulled store's, say) is refused from its
// stated size before its content is inflated, as ErrCorrupt: no receipt
// readproof writes is that large.
func (l *Ledger) readReceipt(id string, blob gitobj.OID) (Receipt, error) {
	data, err := l.store.BlobAtMost(blob, MaxEncodedLen)
	if errors.Is(err, gitobj.ErrTooLarge) {
		return Receipt{}, fmt.Errorf("receipt %s: %w: %v, a receipt's bound (readproof writes none larger): the store was edited; restore the chain from a copy", id, ErrCorrupt, err)
	}
	if err != nil {
		return Receipt{}, fmt.Errorf("reading receipt %s (blob %s): %w", id, blob, err)
	}
	r, err := DecodeReceipt(data)
	if err != nil {
		return Receipt{}, fmt.Errorf("receipt %s: %w: %v", id, ErrCorrupt, err)
	}
	if r.ID != id {
		return Receipt{}, fmt.Errorf("receipt %s: %w: the blob holds receipt %s", id, ErrCorrupt, r.ID)
	}
	return r, nil
}

// Entry is one receipt of a session chain as Scan found it: Err is set
// (wrapping ErrCorrupt) when the stored blob could not be read as the
// receipt its name says, and (wrapping ErrBindingEdited and ErrCorrupt,
// Receipt set) when a version 2 receipt's append commit carries another
// binding line than its MAC covers, or no commit appends it.
type Entry struct {
	ID      string
	Receipt Receipt
	Err     error
	// Binding is the run the receipt was issued for: a version 2
	// receipt's own, under its MAC; a version 1 receipt's as the commit
	// that appended it names it (zero for an unbound receipt).
	Binding Binding
}

// List returns the receipts of a session in issue order (the order of its
// chain), or an empty list for a session without receipts. A receipt that
// cannot be decoded fails the whole listing with ErrCorrupt; use Scan to see
// the others.
func (l *Ledger) List(session string) ([]Receipt, error) {
	entries, err := l.Scan(session)
	if err != nil {
		return nil, err
	}
	out := make([]Receipt, 0, len(entries))
	for _, e := range entries {
		if e.Err != nil {
			return nil, fmt.Errorf("listing receipts of session %q: %w", session, e.Err)
		}
		out = append(out, e.Receipt)
	}
	return out, nil
}

// Scan returns every receipt stored in a session's chain, in issue order,
// each decoded or with its error.
//
// Issue order is the first-parent history of the session ref, oldest first
// (each append commit names its receipt on its first line). Receipts in the
// tree that no first-parent commit names (brought in by a merge) follow,
// ordered by end time, start time and id.
//
// Scan holds every receipt of the session at once: ScanSession reads the
// same entries one at a time.
func (l *Ledger) Scan(session string) ([]Entry, error) {
	sc, err := l.ScanSession(session)
	if err != nil || sc == nil {
		return nil, err
	}
	entries := make([]Entry, 0, sc.Len())
	err = sc.Each(func(e Entry) error {
		entries = append(entries, e)
		return nil
	})
	return entries, err
}

// SessionScan is a session chain read for its receipts (ScanSession):
// which receipts it holds, in which order, and how each was appended,
// without the receipts themselves, which Each reads one at a time. What it
// keeps is a few small strings a receipt (its id, its blob's id and its
// append commit's message), whatever the receipts hold.
type SessionScan struct {
	l       *Ledger
	session string
	ref     string
	ids     []string              // issue order, then the receipts no append commit names
	blobs   map[string]gitobj.OID // id -> blob
	msgs    map[string]string     // id -> message of the commit appending it
	// notAppends are the receipts a commit names without appending them:
	// what the newest such commit does
	notAppends map[string]string
	bad        map[string]string // tree paths that hold no receipt file, and why
	unheld     []Entry           // commits naming a receipt the tip does not hold
	// dropped are the receipts an append commit of the chain added and a
	// later commit removed, which the tip does not hold: the newest append
	// commit of each, and the blob it added
	dropped map[string]droppedAt
}

// droppedAt is where a receipt the tip no longer holds was appended.
type droppedAt struct {
	commit gitobj.OID
	blob   gitobj.OID
}

// Dropped returns, sorted by id, the receipts of the chain that an append
// commit added and a later commit removed (readproof never writes such a
// commit; `readproof verify` reports it), each read from its append
// commit's tree, its Err wrapping ErrCorrupt: the chain is the session's
// record, and a receipt dropped from it is no proof of a call of the
// session. Each and Len leave them out.
func (sc *SessionScan) Dropped() []Entry {
	if sc == nil || len(sc.dropped) == 0 {
		return nil
	}
	var out []Entry
	for _, id := range slices.Sorted(maps.Keys(sc.dropped)) {
		d := sc.dropped[id]
		r, err := sc.l.readReceipt(id, d.blob)
		e := Entry{ID: id, Receipt: r, Err: err}
		if err == nil {
			e.Binding = r.Bound
			e.Err = fmt.Errorf("session %q: receipt %s: %w: appended by commit %s of %s, then removed from the chain by a later commit, so the session's record no longer holds it; readproof never removes a receipt: restore the chain from a copy that holds it", sc.session, id, ErrCorrupt, d.commit, sc.ref)
		} else {
			// its bytes fail too: the removal is named all the same
			e.Err = fmt.Errorf("session %q: %w (as appended by commit %s of %s, which a later commit removed from the chain; readproof never removes a receipt: restore the chain from a copy that holds it)", sc.session, err, d.commit, sc.ref)
		}
		out = append(out, e)
	}
	return out
}

// Len is the number of entries Each gives.
func (sc *SessionScan) Len() int { return len(sc.ids) + len(sc.bad) + len(sc.unheld) }

// Each calls fn with every entry of the chain, in Scan's order, each
// receipt read and decoded when its turn comes, and stops at fn's first
// error, which it returns. It may be called again: it reads the receipts
// again, not the chain.
func (sc *SessionScan) Each(fn func(Entry) error) error {
	for _, id := range sc.ids {
		if err := fn(sc.entry(id)); err != nil {
			return err
		}
	}
	for _, path := range slices.Sorted(maps.Keys(sc.bad)) {
		if err := fn(Entry{ID: path, Err: fmt.Errorf("session %q: %s: %w: %s", sc.session, path, ErrCorrupt, sc.bad[path])}); err != nil {
			return err
		}
	}
	for _, e := range sc.unheld {
		if err := fn(e); err != nil {
			return err
		}
	}
	return nil
}

// entry reads the receipt id of the chain.
func (sc *SessionScan) entry(id string) Entry {
	e := sc.l.entry(sc.ref, id, sc.blobs[id], sc.msgs)
	if why, ok := sc.notAppends[id]; ok && (e.Err == nil || errors.Is(e.Err, ErrBindingEdited)) {
		e.Err = errNotAppend(id, sc.session, sc.ref, why)
	}
	return e
}

// ScanSession reads a session's chain as Scan does, but not its receipts:
// Each reads them, one at a time, so that a command going through a
// session of 100,000 receipts holds one of them at a time. It returns nil
// for a session without receipts.
func (l *Ledger) ScanSession(session string) (*SessionScan, error) {
	if err := identity.ValidateSessionID(session); err != nil {
		return nil, fmt.Errorf("listing receipts: %w", err)
	}
	tip, err := l.ref(SessionRef(session))
	if err != nil || tip == "" {
		return nil, err
	}
	// The tree is authoritative for the set of receipts.
	tipCommit, err := l.store.Commit(tip)
	if err != nil {
		return nil, fmt.Errorf("reading receipt commit %s: %w", tip, err)
	}
	// The trees read here are the trees of the older commits' paths
	// whose directories no later append changed (most of them): the
	// append check below reads them from trees.
	trees := newTreeCache(l.store.Tree)
	blobs, bad := map[string]gitobj.OID{}, map[string]string{}
	if err := trees.collect(tipCommit.Tree, "", 0, blobs, bad); err != nil {
		return nil, err
	}
	// The first-parent chain gives the order, and each append commit the
	// binding of its receipt.
	var order []string
	seen := map[string]bool{}
	msgs := map[string]string{} // id -> message of the commit appending it
	visited := map[gitobj.OID]bool{}
	var others []gitobj.OID // parents off the first-parent chain
	// A commit naming a receipt on its first line that does not add it
	// is no append commit (readproof never writes one): its binding line
	// would rebind the receipt, so it is reported, and the commit that
	// adds the receipt is taken.
	notAppends := map[string]string{} // id -> what the newest such commit does
	// A commit naming a receipt that neither the tip nor its own tree
	// holds is reported as `readproof verify` reports it.
	var unheld []Entry
	unheldAt := map[string]bool{} // the paths of unheld, the newest commit's kept
	passOver := func(id string, c gitobj.OID, why string) {
		if _, ok := notAppends[id]; !ok {
			notAppends[id] = namesBut(c, why)
		}
	}
	// A commit naming a receipt the tip does not hold that adds it (no
	// unheld entry) appended it, and a later commit dropped it.
	dropped := map[string]droppedAt{}
	noteDropped := func(id string, c, tree gitobj.OID, unheldHere []Entry) error {
		path := strings.Join(sessionPath(id), "/")
		if _, done := dropped[id]; done || bad[path] != "" {
			return nil
		}
		for _, e := range unheldHere {
			if e.ID == path {
				return nil // the commit did not add it
			}
		}
		blob, ok, err := l.lookup(tree, sessionPath(id))
		if err == nil && ok {
			dropped[id] = droppedAt{commit: c, blob: blob}
		}
		return err
	}
	commits := &commitReader{read: l.store.Commit, trees: map[gitobj.OID]gitobj.OID{}}
	for c, cm := tip, tipCommit; ; {
		if len(others) > 0 {
			// below a merge: the other side may fork here, and its
			// walk must not read this commit again. Above the newest
			// merge no other side reaches (a merge's parents are older
			// than it), so a chain without merges marks none (at
			// 100,000 receipts, about 9 MB of commit ids).
			visited[c] = true
			commits.trees[c] = cm.Tree
		}
		var parent gitobj.Commit
		if len(cm.Parents) > 0 {
			if parent, err = l.store.Commit(cm.Parents[0]); err != nil {
				return nil, fmt.Errorf("reading receipt commit %s of session %q: %w", cm.Parents[0], session, err)
			}
		}
		if id, ok := appendedID(cm); ok && blobs[id] != "" && !seen[id] {
			why := mergeNames(len(cm.Parents))
			if len(cm.Parents) < 2 {
				why, err = trees.notAppend(cm, parent.Tree, sessionPath(id))
			}
			switch {
			case err != nil:
				return nil, fmt.Errorf("reading receipt commit %s of session %q: %w", c, session, err)
			case why != "":
				passOver(id, c, why)
			default:
				seen[id] = true
				order = append(order, id)
				msgs[id] = cm.Message
			}
		} else if ok && ValidID(id) && blobs[id] == "" && !unheldAt[strings.Join(sessionPath(id), "/")] {
			// names a receipt the tip does not hold
			e, err := l.unheld(session, c, cm, parent.Tree, bad)
			if err == nil {
				err = noteDropped(id, c, cm.Tree, e)
			}
			if err != nil {
				return nil, fmt.Errorf("reading receipt commit %s of session %q: %w", c, session, err)
			}
			for _, e := range e {
				unheldAt[e.ID] = true
			}
			unheld = append(unheld, e...)
		}
		if len(cm.Parents) == 0 {
			break
		}
		others = append(others, cm.Parents[1:]...)
		c, cm = cm.Parents[0], parent
	}
	// The merges' other sides: the append commits of the receipts a
	// merge brought in, and the commits there that name a receipt the
	// tip does not hold, reported as on the first-parent history. Each
	// commit is read once (visited holds the first-parent history below
	// the newest merge, all the other sides can reach).
	if len(others) > 0 {
		var visitErr error
		fail := func(c gitobj.OID, err error) bool {
			visitErr = fmt.Errorf("reading receipt commit %s of session %q: %w", c, session, err)
			return true
		}
		c, err := walkCommits(commits.commit, others, visited, false, func(oc gitobj.OID, cm gitobj.Commit) bool {
			// a merge there may have walked here by one parent
			// and come back by the other (TestScanNestedMergeReadsOnce)
			commits.trees[oc] = cm.Tree
			id, ok := appendedID(cm)
			if !ok {
				return false
			}
			if blobs[id] != "" && !seen[id] {
				if _, done := msgs[id]; !done {
					// as on the first-parent history: a commit
					// naming it that does not append it is passed over
					why, err := notAppended(trees, cm, sessionPath(id), commits.tree)
					switch {
					case err != nil:
						return fail(oc, err)
					case why != "":
						passOver(id, oc, why)
						return false
					}
					msgs[id] = cm.Message
				}
			} else if ValidID(id) && blobs[id] == "" && !unheldAt[strings.Join(sessionPath(id), "/")] {
				var parent gitobj.OID
				if len(cm.Parents) > 0 {
					tree, err := commits.tree(cm.Parents[0])
					if err != nil {
						return fail(cm.Parents[0], err)
					}
					parent = tree
				}
				e, err := l.unheld(session, oc, cm, parent, bad)
				if err == nil {
					err = noteDropped(id, oc, cm.Tree, e)
				}
				if err != nil {
					return fail(oc, err)
				}
				for _, e := range e {
					unheldAt[e.ID] = true
				}
				unheld = append(unheld, e...)
			}
			return false
		})
		if err != nil {
			return nil, fmt.Errorf("reading receipt commit %s of session %q: %w", c, session, err)
		}
		if visitErr != nil {
			return nil, visitErr
		}
	}
	slices.Reverse(order)
	sc := &SessionScan{l: l, session: session, ref: SessionRef(session), ids: order, blobs: blobs, msgs: msgs,
		notAppends: notAppends, bad: bad, unheld: unheld, dropped: dropped}
	// The receipts no append commit names go by their times: those are
	// read now, and kept without the receipts.
	type restKey struct {
		id         string
		end, start time.Time
	}
	var rest []restKey
	for id := range blobs {
		if !seen[id] {
			e := sc.entry(id)
			rest = append(rest, restKey{id, e.Receipt.End, e.Receipt.Start})
		}
	}
	slices.SortFunc(rest, func(a, b restKey) int {
		return cmp.Or(a.end.Compare(b.end), a.start.Compare(b.start), strings.Compare(a.id, b.id))
	})
	for _, k := range rest {
		sc.ids = append(sc.ids, k.id)
	}
	return sc, nil
}

// unheld reports commit c (cm) of session's chain, whose first line names
// a receipt the tip's tree does not hold, when it does not add it either:
// an entry for the receipt's path, with the words `readproof verify`
// gives the commit (CheckAdded). None when it adds it (a later commit
// dropped it, which verify reports), or when the tip holds an entry there
// that is no receipt file (in bad, reported as unexpected already).
// firstParent is the tree of its first parent ("" for none).
func (l *Ledger) unheld(session string, c gitobj.OID, cm gitobj.Commit, firstParent gitobj.OID, bad map[string]string) ([]Entry, error) {
	parents := make([]gitobj.OID, len(cm.Parents))
	for i, p := range cm.Parents {
		if i == 0 {
			parents[i] = firstParent
			continue
		}
		pc, err := l.store.Commit(p)
		if err != nil {
			return nil, err
		}
		parents[i] = pc.Tree
	}
	strays, err := CheckAdded(l.store.Tree, SessionRef(session), parents, cm.Tree, cm.Message)
	if err != nil {
		return nil, err
	}
	var out []Entry
	for _, s := range strays {
		if s.Unappended && s.Path != "" && bad[s.Path] == "" {
			out = append(out, Entry{ID: s.Path, Err: fmt.Errorf("session %q: %s: %w: commit %s: %s; readproof did not write this commit: restore the chain from a copy that holds it as readproof wrote it", session, s.Path, ErrCorrupt, c, s.Why)})
		}
	}
	return out, nil
}

// entry reads the receipt id stored as blob in chain ref, whose append
// commit's message is msgs[id] when one was found. A version 2 receipt's
// binding is its own (under its MAC); a binding line that disagrees with
// it, or a missing append commit, is Err (ErrBindingEdited), the receipt
// kept. A version 1 receipt's binding is its append commit's line.
func (l *Ledger) entry(ref, id string, blob gitobj.OID, msgs map[string]string) Entry {
	r, err := l.readReceipt(id, blob)
	msg, found := msgs[id]
	e := Entry{ID: id, Receipt: r, Err: err}
	switch {
	case err != nil:
		e.Binding = parseBinding(msg)
	case r.version() == BoundVersion:
		e.Binding = r.Bound
		if !found {
			e.Err = errNoAppendCommit(r, ref)
		} else {
			e.Err = CheckBindingLine(r, ref, msg)
		}
	default:
		e.Binding = v1Binding(r, msg)
	}
	return e
}

// treeCache reads the trees at a receipt's path in the commits of a
// chain. The trees of the tip (collect) are kept; of the others, only the
// one last read or computed at each place (the root, a directory): walking
// a chain from its tip, the tree a commit's parent has at a place is the
// tree there of the next older commit that appends there, so each tree is
// read at most once (an append's parent's trees are computed, not read:
// notAppend), and what is kept stays the size of the tip's tree.
type treeCache struct {
	read   func(gitobj.OID) ([]gitobj.TreeEntry, error)
	listed map[gitobj.OID][]gitobj.TreeEntry // the tip's trees
	last   map[string]listedTree             // by place: "" the root, "/d1", "/d1/d2"
}

type listedTree struct {
	id      gitobj.OID
	entries []gitobj.TreeEntry
	// content is the tree object's content when the tree was computed
	// (isWithout), nil when it was read
	content []byte
}

func newTreeCache(read func(gitobj.OID) ([]gitobj.TreeEntry, error)) treeCache {
	return treeCache{read: read, listed: map[gitobj.OID][]gitobj.TreeEntry{}, last: map[string]listedTree{}}
}

// readTree reads tree id.
func (t treeCache) readTree(id gitobj.OID) ([]gitobj.TreeEntry, error) {
	entries, err := t.read(id)
	if err != nil {
		return nil, fmt.Errorf("reading receipt tree %s: %w", id, err)
	}
	return entries, nil
}

// list returns the entries of tree id at place, a tip's tree or the one
// last read there without reading it again.
func (t treeCache) list(id gitobj.OID, place string) ([]gitobj.TreeEntry, error) {
	if entries, ok := t.listed[id]; ok {
		return entries, nil
	}
	if l, ok := t.last[place]; ok && l.id == id {
		return l.entries, nil
	}
	entries, err := t.readTree(id)
	if err != nil {
		return nil, err
	}
	t.last[place] = listedTree{id: id, entries: entries}
	return entries, nil
}

// at returns the entry at path in tree (none: a zero entry; tree "" holds
// none).
func (t treeCache) at(tree gitobj.OID, path []string) (gitobj.TreeEntry, error) {
	if tree == "" && len(path) > 0 {
		return gitobj.TreeEntry{}, nil
	}
	e, _, err := entryAt(t.list, tree, path)
	return e, err
}

// notAppend says how commit cm, whose first parent's tree is parentTree
// ("" for none), fails to add the file at path: "" when it adds it (its
// tree holds it as a file of mode 100644, as readproof writes it, and its
// parent's does not with those bytes).
//
// An append's parent tree is its own without the file: when parentTree is
// that tree's id, the parent's trees are known without reading them (and
// kept as the last ones at their places, where the next older commit
// finds its own), so a chain of appends reads no tree beyond its tip's.
// Otherwise (a merge, or a commit that is no append) the parent's trees
// along path are read.
func (t treeCache) notAppend(cm gitobj.Commit, parentTree gitobj.OID, path []string) (string, error) {
	levels, have, err := t.along(cm.Tree, path)
	switch {
	case err != nil || have.OID == "":
		return "its tree does not hold it", err
	case have.Mode != gitobj.ModeFile:
		return fmt.Sprintf("its tree holds %s there, where readproof writes the receipt as a file of mode 100644", modeName(have.Mode)), nil
	case parentTree != "" && t.isWithout(parentTree, levels, path):
		return "", nil
	}
	was, err := t.at(parentTree, path)
	if err != nil || was == have {
		return "its tree holds it with its parent's bytes", err
	}
	return "", nil
}

// along returns the trees tree has along path (its root, then each
// directory path names, as far as tree has them) and the entry at path
// (zero when there is none).
func (t treeCache) along(tree gitobj.OID, path []string) ([]listedTree, gitobj.TreeEntry, error) {
	if tree == "" {
		return nil, gitobj.TreeEntry{}, nil
	}
	levels := make([]listedTree, 0, len(path))
	list := func(id gitobj.OID, place string) ([]gitobj.TreeEntry, error) {
		entries, err := t.list(id, place)
		levels = append(levels, listedTree{id: id, entries: entries})
		return entries, err
	}
	e, _, err := entryAt(list, tree, path)
	return levels, e, err
}

// isWithout reports whether tree parent is the tree whose trees along
// path are levels, which holds a file there, without that file (a
// directory left empty goes too): the ids of those trees are computed,
// not read, each from the content of the tree it replaces with one entry
// changed or gone. When it is, the parent's trees along path are kept as
// the last ones at their places, with their contents.
//
// The ids are hashed from the pieces of each content first; only when the
// parent's matches are the parent's trees made, and a tree computed for
// the commit before (the last one at its place, which the parent's
// replaces there) is made over in place: a chain of appends copies no
// tree's entries or content a commit (at 100,000 receipts, the copies
// were about 1 GB allocated).
func (t treeCache) isWithout(parent gitobj.OID, levels []listedTree, path []string) bool {
	if len(levels) != len(path) {
		return false
	}
	type change struct {
		base     listedTree // the tree replaced: entries and content
		owned    bool       // base is the last one at its place, computed: made over in place
		j        int        // its entry at path
		off, end int        // that entry's bytes in base.content
		child    gitobj.OID // the entry's id in the parent; "" when it goes
		id       gitobj.OID // the parent's tree there; "" when it is gone (left empty)
	}
	changes := make([]change, len(levels))
	child := gitobj.OID("") // the id of the level below in the parent; "" when it is gone
	place := ""
	places := make([]string, len(path))
	for i := range path {
		places[i] = place
		place += "/" + path[i]
	}
	var entry [64]byte
	for i := len(levels) - 1; i >= 0; i-- {
		c := change{base: levels[i], child: child}
		if l, ok := t.last[places[i]]; ok && l.id == c.base.id && l.content != nil {
			c.base, c.owned = l, true // computed for the commit before
		} else {
			var ok bool
			if c.base.content, ok = treeContent(c.base.entries); !ok {
				return false
			}
		}
		entries := c.base.entries
		for ; c.j < len(entries) && entries[c.j].Name != path[i]; c.j++ {
			c.off += entryLen(entries[c.j])
		}
		if c.j == len(entries) || slices.ContainsFunc(entries[c.j+1:], func(e gitobj.TreeEntry) bool { return e.Name == path[i] }) {
			// none, or a name twice (a tree git does not write): the
			// parent without the first could still hold the second,
			// which a read of the parent finds
			return false
		}
		c.end = c.off + entryLen(entries[c.j])
		if c.end > len(c.base.content) {
			return false
		}
		if child == "" && len(entries) == 1 && i > 0 {
			changes[i] = c // left empty: gone from the level above
			continue
		}
		middle := entry[:0]
		if child != "" {
			e := entries[c.j]
			e.OID = child
			var ok bool
			if middle, ok = appendEntry(middle, e); !ok {
				return false
			}
		}
		c.id = piecesID(c.base.content[:c.off], middle, c.base.content[c.end:])
		changes[i] = c
		child = c.id
	}
	if changes[0].id != parent {
		return false
	}
	for i, c := range changes {
		if c.id == "" {
			continue
		}
		entries, content := c.base.entries, c.base.content
		if !c.owned {
			// the tip's trees, or trees read: kept as they are (the
			// content was made for this call)
			entries = slices.Clone(entries)
		}
		if c.child == "" {
			entries = slices.Delete(entries, c.j, c.j+1)
			content = append(content[:c.off], content[c.end:]...)
		} else {
			// the same name and mode: the entry's bytes keep their length
			entries[c.j].OID = c.child
			appendEntry(content[:c.off], entries[c.j])
		}
		t.last[places[i]] = listedTree{id: c.id, entries: entries, content: content}
	}
	return true
}

// notAppended says how commit cm, which names the receipt at path on its
// first line, fails to append it: a merge, or a commit that does not add
// the file to its parent's tree (notAppend); "" when it appends it.
func (l *Ledger) notAppended(trees treeCache, cm gitobj.Commit, path []string) (string, error) {
	return notAppended(trees, cm, path, func(c gitobj.OID) (gitobj.OID, error) {
		p, err := l.store.Commit(c)
		return p.Tree, err
	})
}

// notAppended is Ledger.notAppended reading the tree of a commit with
// treeOf.
func notAppended(trees treeCache, cm gitobj.Commit, path []string, treeOf func(gitobj.OID) (gitobj.OID, error)) (string, error) {
	if len(cm.Parents) > 1 {
		return mergeNames(len(cm.Parents)), nil
	}
	var parentTree gitobj.OID
	if len(cm.Parents) == 1 {
		var err error
		if parentTree, err = treeOf(cm.Parents[0]); err != nil {
			return "", fmt.Errorf("reading receipt commit %s: %w", cm.Parents[0], err)
		}
	}
	return trees.notAppend(cm, parentTree, path)
}

// commitReader reads the commits of a chain for Scan's walk of merges'
// other sides, each once: it keeps the tree of each commit of the
// first-parent history below a merge and of the other sides (a commit of
// the other side may have one for its parent) and the commit last read
// for its tree alone (a commit's parent, which the walk takes next).
type commitReader struct {
	read    func(gitobj.OID) (gitobj.Commit, error)
	trees   map[gitobj.OID]gitobj.OID
	aheadID gitobj.OID
	ahead   gitobj.Commit
}

// commit reads commit id.
func (r *commitReader) commit(id gitobj.OID) (gitobj.Commit, error) {
	if id == r.aheadID {
		r.aheadID = ""
		return r.ahead, nil
	}
	return r.read(id)
}

// tree returns the tree of commit id.
func (r *commitReader) tree(id gitobj.OID) (gitobj.OID, error) {
	if t, ok := r.trees[id]; ok {
		return t, nil
	}
	cm, err := r.read(id)
	if err != nil {
		return "", err
	}
	r.aheadID, r.ahead = id, cm
	return cm.Tree, nil
}

// mergeNames says why a merge of n commits (n > 1) that names a receipt
// on its first line is not its append commit; "" for n < 2.
func mergeNames(n int) string {
	if n < 2 {
		return ""
	}
	return fmt.Sprintf("it is a merge of %d commits, and readproof's merges name no receipt", n)
}

// namesBut says of commit c, which names a receipt on its first line, how
// it fails to append it (why: notAppended).
func namesBut(c gitobj.OID, why string) string {
	return fmt.Sprintf("commit %s names it on its first line but %s", c, why)
}

// errNotAppend is the report for a receipt a commit names on its first
// line without adding it (why says so).
func errNotAppend(id, session, ref, why string) error {
	return &bindingError{fmt.Sprintf("receipt %s of session %q: %s: readproof appends a receipt by one commit that adds it, and that commit's binding line is the receipt's; this commit of %s would rebind it "+
		"(restore the chain from a clone or a backup; the binding shown is the one of the commit that added it)", id, session, why, ref)}
}

// appendedID is the id of the receipt c, a session chain commit, appended:
// the first line of an append commit (appendLine).
func appendedID(c gitobj.Commit) (string, bool) {
	id, ok, _ := appendLine(SessionRefPrefix, c.Message)
	return id, ok
}

// collect gathers <id>.json blobs under the two fan-out levels of a session
// tree. Entries that do not fit the layout go to bad (path -> reason), so an
// edit of the tree shows up as a corrupt entry instead of hiding.
func (t treeCache) collect(tree gitobj.OID, prefix string, depth int, into map[string]gitobj.OID, bad map[string]string) error {
	entries, err := t.readTree(tree)
	if err != nil {
		return err
	}
	t.listed[tree] = entries
	for _, e := range entries {
		switch {
		case depth < 2 && e.Mode == gitobj.ModeDir:
			if err := t.collect(e.OID, prefix+e.Name+"/", depth+1, into, bad); err != nil {
				return err
			}
		case depth == 2 && e.Mode == gitobj.ModeFile && strings.HasSuffix(e.Name, ".json"):
			into[strings.TrimSuffix(e.Name, ".json")] = e.OID
		default:
			bad[prefix+e.Name] = "unexpected entry in the receipt tree"
		}
	}
	return nil
}

// Sessions lists the sessions that have receipts, sorted.
func (l *Ledger) Sessions() ([]string, error) {
	refs, err := l.store.Refs(SessionRefPrefix)
	if err != nil {
		return nil, fmt.Errorf("listing receipt sessions: %w", err)
	}
	out := make([]string, 0, len(refs))
	for _, r := range refs {
		out = append(out, strings.TrimPrefix(r.Name, SessionRefPrefix))
	}
	return out, nil
}

// GetAll returns the receipts with the given ids, in the given order.
func (l *Ledger) GetAll(ids []string) ([]Receipt, error) {
	out := make([]Receipt, 0, len(ids))
	for _, id := range ids {
		r, err := l.Get(id)
		if err != nil {
			return nil, err
		}
		out = append(out, r)
	}
	return out, nil
}
