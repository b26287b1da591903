package receipts

import (
	"fmt"
	"sort"
	"strings"

	"github.com/readproof/readproof/gitstore/gitobj"
)

// Issue is one problem Check found in the stored receipts.
type Issue struct {
	// Ref is the chain the problem is in; ID the receipt (or the tree
	// path, for an entry that is not a receipt), "" for the chain itself.
	Ref, ID string
	Message string
	// Binding marks a version 2 receipt whose append commit's binding
	// line is not the one its MAC covers, or that no commit appends.
	Binding bool
}

func (i Issue) String() string {
	if i.ID == "" {
		return i.Ref + ": " + i.Message
	}
	return i.Ref + ": " + i.ID + ": " + i.Message
}

type stored struct {
	path string
	blob gitobj.OID
}

// Check reads every session chain and every index chain and reports what
// does not hold (docs/receipts.md, "Storage"): each tree entry is a receipt
// stored at its own path, that decodes, whose id is its name, of the
// session of its chain; each receipt of a session is in its index chain as
// the same blob, and the index holds nothing no session holds. Receipt MACs
// are not checked (they need the receipts key: Verify does). The error is
// for a chain that cannot be listed at all.
func (l *Ledger) Check() ([]Issue, error) {
	var issues []Issue
	add := func(ref, id, format string, args ...any) {
		issues = append(issues, Issue{Ref: ref, ID: id, Message: fmt.Sprintf(format, args...)})
	}
	addBinding := func(ref, id, format string, args ...any) {
		issues = append(issues, Issue{Ref: ref, ID: id, Message: fmt.Sprintf(format, args...), Binding: true})
	}
	sessions, err := l.store.Refs(SessionRefPrefix)
	if err != nil {
		return nil, fmt.Errorf("listing receipt sessions: %w", err)
	}
	inSession := map[string]gitobj.OID{}
	decoded := map[string]Receipt{}
	for _, ref := range sessions {
		session := strings.TrimPrefix(ref.Name, SessionRefPrefix)
		items, err := l.chainTree(ref.OID, ref.Name, add)
		if err != nil {
			add(ref.Name, "", "%v", err)
			continue
		}
		for _, id := range sortedIDs(items) {
			it := items[id]
			if !ValidID(id) {
				add(ref.Name, it.path, "not a receipt id")
				continue
			}
			want := strings.Join(sessionPath(id), "/")
			if it.path != want {
				add(ref.Name, id, "stored at %s, a receipt with this id belongs at %s", it.path, want)
				continue
			}
			r, err := l.readReceipt(id, it.blob)
			if err != nil {
				add(ref.Name, id, "%v", err)
				continue
			}
			if r.Session != session {
				add(ref.Name, id, "the receipt is of session %q, stored in the chain of session %q", r.Session, session)
			}
			inSession[id] = it.blob
			decoded[id] = r
		}
		l.checkBindingLines(ref.Name, ref.OID, items, decoded, inSession, addBinding)
	}
	index, err := l.store.Refs(IndexRefPrefix)
	if err != nil {
		return nil, fmt.Errorf("listing receipt index chains: %w", err)
	}
	inIndex := map[string]bool{}
	for _, ref := range index {
		digit := strings.TrimPrefix(ref.Name, IndexRefPrefix)
		items, err := l.chainTree(ref.OID, ref.Name, add)
		if err != nil {
			add(ref.Name, "", "%v", err)
			continue
		}
		l.checkBindingLines(ref.Name, ref.OID, items, decoded, inSession, addBinding)
		for _, id := range sortedIDs(items) {
			it := items[id]
			if !ValidID(id) || indexRef(id) != ref.Name || it.path != strings.Join(indexPath(id), "/") {
				add(ref.Name, id, "index entry %s is not where the index keeps receipt %s (index %s)", it.path, id, digit)
				continue
			}
			inIndex[id] = true
			blob, ok := inSession[id]
			switch {
			case !ok:
				if _, err := l.readReceipt(id, it.blob); err != nil {
					add(ref.Name, id, "%v", err)
				} else {
					add(ref.Name, id, "the index holds a receipt that no session chain holds")
				}
			case blob != it.blob:
				add(ref.Name, id, "the index holds blob %s, the session chain blob %s", it.blob, blob)
			}
		}
	}
	for _, id := range sortedIDs(inSession) {
		if !inIndex[id] {
			add(indexRef(id), id, "receipt of a session chain is missing from the index")
		}
	}
	return issues, nil
}

// checkBindingLines checks the binding line of every commit of chain ref
// (tip) that appends a version 2 receipt of its tree (docs/receipts.md,
// "Storage"): each must be the binding the receipt's MAC covers, and the
// receipt must have an append commit (first line as appendLine reads it). decoded holds
// the receipts of the session chains that decoded, by id, and blobs their
// blobs: an index entry with another blob is reported by Check. The history is walked only when the
// tree holds a version 2 receipt.
func (l *Ledger) checkBindingLines(ref string, tip gitobj.OID, items map[string]stored, decoded map[string]Receipt, blobs map[string]gitobj.OID, add func(ref, id, format string, args ...any)) {
	var bound []string
	for _, id := range sortedIDs(items) {
		if r, ok := decoded[id]; ok && r.version() == BoundVersion && blobs[id] == items[id].blob {
			bound = append(bound, id)
		}
	}
	if len(bound) == 0 {
		return
	}
	msgs := map[string][]string{}
	c, err := l.walkCommits([]gitobj.OID{tip}, map[gitobj.OID]bool{}, false, func(_ gitobj.OID, cm gitobj.Commit) bool {
		if id, ok, _ := appendLine(ref, cm.Message); ok {
			msgs[id] = append(msgs[id], cm.Message)
		}
		return false
	})
	if err != nil {
		add(ref, "", "reading receipt commit %s: %v", c, err)
		return
	}
	for _, id := range bound {
		r := decoded[id]
		if len(msgs[id]) == 0 {
			add(ref, id, "%v", errNoAppendCommit(r, ref))
			continue
		}
		for _, msg := range msgs[id] {
			if err := CheckBindingLine(r, ref, msg); err != nil {
				add(ref, id, "%v", err)
				break
			}
		}
	}
}

// chainTree returns the receipts in the tree of a chain's tip, keyed by id,
// with their paths; tree entries that do not fit the layout are reported.
func (l *Ledger) chainTree(tip gitobj.OID, ref string, add func(ref, id, format string, args ...any)) (map[string]stored, error) {
	c, err := l.store.Commit(tip)
	if err != nil {
		return nil, fmt.Errorf("reading receipt commit %s: %w", tip, err)
	}
	out := map[string]stored{}
	var walk func(tree gitobj.OID, prefix string, depth int) error
	walk = func(tree gitobj.OID, prefix string, depth int) error {
		entries, err := l.store.Tree(tree)
		if err != nil {
			return fmt.Errorf("reading receipt tree %s: %w", tree, err)
		}
		for _, e := range entries {
			switch {
			case depth < 2 && e.Mode == gitobj.ModeDir:
				if err := walk(e.OID, prefix+e.Name+"/", depth+1); err != nil {
					return err
				}
			case depth == 2 && e.Mode == gitobj.ModeFile && strings.HasSuffix(e.Name, ".json"):
				out[strings.TrimSuffix(e.Name, ".json")] = stored{path: prefix + e.Name, blob: e.OID}
			default:
				add(ref, prefix+e.Name, "unexpected entry in the receipt tree")
			}
		}
		return nil
	}
	if err := walk(c.Tree, "", 0); err != nil {
		return nil, err
	}
	return out, nil
}

func sortedIDs[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
