package share

import (
	"context"
	"fmt"
	"path"
	"strings"
	"time"

	"github.com/readproof/readproof/gitstore"
	"github.com/readproof/readproof/identity"
	"github.com/readproof/readproof/internal/store"
	"github.com/readproof/readproof/internal/text"
	"github.com/readproof/readproof/receipts"
)

// Receipt chains (docs/receipts.md) and proof-of-read verdict chains
// (docs/store-format.md, "Proof-of-read verdicts") travel like resource
// chains: adopted when absent, fast-forwarded when the remote contains the
// local tip, merged when both moved (docs/sync.md, "Receipts and verdicts").

// receiptChain splits a receipt ref name below receipts.RefPrefix:
// "sessions/<session>" or "index/<digit>". ok is false for anything else,
// which sync ignores.
func receiptChain(name string) (session, digit string, ok bool) {
	if s, found := strings.CutPrefix(name, "sessions/"); found {
		return s, "", identity.ValidateSessionID(s) == nil
	}
	if d, found := strings.CutPrefix(name, "index/"); found {
		return "", d, isIDDigit(d)
	}
	return "", "", false
}

func isIDDigit(s string) bool {
	return len(s) == 1 && strings.Contains("0123456789abcdefghjkmnpqrstvwxyz", s)
}

// checkReceiptTree decodes every receipt blob of a receipt chain's tree
// that the local tree old ("" for none) does not hold at the same place:
// each is a receipt (receipts.DecodeReceipt) stored under its own id, in
// the fan-out directories its id picks, and a session chain holds only
// receipts of its session. MACs are not checked (that needs the key). The
// tree of a chain's tip holds every receipt of the chain: chains only grow.
func checkReceiptTree(g gitstore.Store, name string, tip, oldTip gitstore.OID) []string {
	session, digit, _ := receiptChain(name)
	tree, err := commitTree(g, tip)
	if err != nil {
		return []string{fmt.Sprintf("receipt chain %s: %v", name, err)}
	}
	if tree == store.EmptyTree {
		return []string{fmt.Sprintf("receipt chain %s (commit %s): an empty tree is not a receipt chain", name, tip)}
	}
	var old gitstore.OID
	if oldTip != "" {
		if old, err = commitTree(g, oldTip); err != nil {
			return []string{fmt.Sprintf("receipt chain %s: %v", name, err)}
		}
	}
	var failures []string
	fail := func(path, format string, args ...any) {
		failures = append(failures, fmt.Sprintf("receipt chain %s (commit %s) %s: %s", name, tip, path, fmt.Sprintf(format, args...)))
	}
	var walk func(tree, old gitstore.OID, dirs []string)
	walk = func(tree, old gitstore.OID, dirs []string) {
		if tree == old {
			return
		}
		entries, err := g.Tree(tree)
		if err != nil {
			fail(strings.Join(dirs, "/"), "%v", err)
			return
		}
		// what the local tree holds at this place: an entry it holds
		// with the same blob and mode needs no check (one with another
		// mode is not the local file: a chain that does not descend
		// from the local tip may hold it so)
		had := map[string]gitstore.TreeEntry{}
		if old != "" {
			if oldEntries, err := g.Tree(old); err == nil {
				for _, e := range oldEntries {
					had[e.Name] = e
				}
			}
		}
		for _, e := range entries {
			path := strings.Join(append(dirs, e.Name), "/")
			if len(dirs) < 2 {
				if e.Mode != gitstore.ModeDir || !isIDDigit(e.Name) {
					fail(path, "unexpected entry in the receipt tree")
					continue
				}
				walk(e.OID, had[e.Name].OID, append(dirs, e.Name))
				continue
			}
			if h, ok := had[e.Name]; ok && h.OID == e.OID && h.Mode == e.Mode {
				continue
			}
			id, isJSON := strings.CutSuffix(e.Name, ".json")
			if e.Mode != gitstore.ModeFile || !isJSON || !receipts.ValidID(id) {
				fail(path, "unexpected entry in the receipt tree")
				continue
			}
			d := id[len(receipts.IDPrefix):]
			want := []string{d[0:1], d[1:2]}
			if digit != "" {
				want = []string{d[1:2], d[2:3]}
				if d[0:1] != digit {
					fail(path, "receipt %s belongs in index chain %s", id, d[0:1])
				}
			}
			if dirs[0] != want[0] || dirs[1] != want[1] {
				fail(path, "receipt %s is stored under %s/%s, its id says %s/%s", id, dirs[0], dirs[1], want[0], want[1])
			}
			data, err := g.BlobAtMost(e.OID, store.MaxRecordBytes)
			if err != nil {
				fail(path, "%v", err)
				continue
			}
			r, err := receipts.DecodeReceipt(data)
			if err != nil {
				fail(path, "%v", err)
				continue
			}
			if r.ID != id {
				fail(path, "the blob holds receipt %s", r.ID)
			}
			if session != "" && r.Session != session {
				fail(path, "receipt of session %q in the chain of session %q", r.Session, session)
			}
		}
	}
	walk(tree, old, nil)
	return failures
}

func commitTree(g gitstore.Store, id gitstore.OID) (gitstore.OID, error) {
	c, err := g.Commit(id)
	if err != nil {
		return "", err
	}
	return c.Tree, nil
}

// unionReceiptTrees returns the union of two receipt trees. A receipt id
// stored with different content on the two sides keeps the local blob (a)
// and is appended to conflicts.
func unionReceiptTrees(g gitstore.Store, a, b gitstore.OID, conflicts *[]string) (gitstore.OID, error) {
	if a == b {
		return a, nil
	}
	ae, err := g.Tree(a)
	if err != nil {
		return "", err
	}
	be, err := g.Tree(b)
	if err != nil {
		return "", err
	}
	out := make([]gitstore.TreeEntry, 0, len(ae)+len(be))
	index := map[string]int{}
	for _, e := range ae {
		index[e.Name] = len(out)
		out = append(out, e)
	}
	for _, e := range be {
		i, ok := index[e.Name]
		if !ok {
			out = append(out, e)
			continue
		}
		l := out[i]
		switch {
		case l.OID == e.OID:
		case l.Mode == gitstore.ModeDir && e.Mode == gitstore.ModeDir:
			sub, err := unionReceiptTrees(g, l.OID, e.OID, conflicts)
			if err != nil {
				return "", err
			}
			out[i].OID = sub
		default:
			*conflicts = append(*conflicts, strings.TrimSuffix(e.Name, ".json"))
		}
	}
	return g.PutTree(out)
}

// mergeReceipts writes the merge of two tips of receipt chain name: both
// are parents, the tree is the union of theirs. The commit is
// deterministic.
func mergeReceipts(g gitstore.Store, name string, local, remote gitstore.OID, conflicts *[]string) (gitstore.OID, error) {
	lc, err := g.Commit(local)
	if err != nil {
		return "", fmt.Errorf("receipt chain %s: %w", name, err)
	}
	rc, err := g.Commit(remote)
	if err != nil {
		return "", fmt.Errorf("receipt chain %s: %w", name, err)
	}
	tree, err := unionReceiptTrees(g, lc.Tree, rc.Tree, conflicts)
	if err != nil {
		return "", fmt.Errorf("receipt chain %s: %w", name, err)
	}
	sig := signature(later(lc.Committer.When, rc.Committer.When))
	return g.PutCommit(gitstore.Commit{Tree: tree, Parents: sortedPair(local, remote), Author: sig, Committer: sig,
		Message: fmt.Sprintf("merge receipts of %s\n", name)})
}

// verdictsAt decodes verdicts.json of a verdict chain commit.
func verdictsAt(g gitstore.Store, run string, id gitstore.OID) (*store.VerdictRecord, gitstore.Commit, error) {
	c, err := g.Commit(id)
	if err != nil {
		return nil, c, fmt.Errorf("verdicts of run %s, commit %s: %w", run, id, err)
	}
	blob, err := gitstore.FileAt(g, c.Tree, store.VerdictsFile)
	if err != nil {
		return nil, c, fmt.Errorf("verdicts of run %s, commit %s: %w", run, id, err)
	}
	data, err := g.BlobAtMost(blob, store.MaxBytesOf(store.VerdictsFile))
	if err != nil {
		return nil, c, fmt.Errorf("verdicts of run %s, commit %s: %w", run, id, err)
	}
	r, err := store.DecodeVerdicts(run, data)
	if err != nil {
		return nil, c, fmt.Errorf("verdict commit %s: %w", id, err)
	}
	r.ID = string(id)
	return r, c, nil
}

// checkVerdictChainRead decodes verdicts.json of every commit of run's
// verdict chain reachable from tip and not from oldTip ("" for none),
// returning as well the commits it checked (revList's answer) and keeping in read, when not nil,
// the record of each that decoded, for the record check of a clone
// (checkIncomingRun) to judge without reading them again. A commit reads
// holds as decoded for run is not read again (a pull's record check,
// pullVerdictMACs, decoded it); one that decodes is added to reads.
func checkVerdictChainRead(ctx context.Context, g gitstore.Store, t *gitstore.Transport, run string, tip, oldTip gitstore.OID, read map[gitstore.OID]*store.VerdictRecord, reads decodedVerdicts) ([]string, []gitstore.RevListCommit) {
	commits, err := revList(ctx, g, t, tip, oldTip)
	if err != nil {
		return []string{fmt.Sprintf("verdicts of run %s: %v", run, err)}, nil
	}
	return decodeVerdictCommits(g, run, commits, read, reads), commits
}

// decodeVerdictCommits decodes verdicts.json of each of commits, commits
// of run's verdict chain, and checks that its tree holds nothing else.
// Each that passes is added to reads, when not nil, and its record to
// read, when not nil; a commit reads holds for run already is skipped.
func decodeVerdictCommits(g gitstore.Store, run string, commits []gitstore.RevListCommit, read map[gitstore.OID]*store.VerdictRecord, reads decodedVerdicts) []string {
	var failures []string
	var named string // the manifest the last record kept names: a chain's records share one string
	for _, c := range commits {
		if reads.decoded(run, c.ID) {
			continue
		}
		rec, cm, err := verdictsAt(g, run, c.ID)
		if err != nil {
			failures = append(failures, err.Error())
			continue
		}
		if read != nil {
			read[c.ID] = rec
		}
		entries, err := g.Tree(cm.Tree)
		if err != nil {
			failures = append(failures, fmt.Sprintf("verdicts of run %s, commit %s: %v", run, c.ID, err))
		} else if p := store.VerdictTreeExtra(entries); p != "" {
			failures = append(failures, fmt.Sprintf("verdicts of run %s, commit %s: tree entry %s is not part of the verdict record: no reader reads it, yet `git show` of the chain would show it with the check (%s); %s", run, c.ID, text.Printable(p), store.VerdictTreeRule, handWritten(p, c.ID)))
		} else if reads != nil {
			if rec.ManifestID != named {
				named = rec.ManifestID
			}
			reads[c.ID] = decodedVerdict{run: run, manifest: named, check: rec.Check, copy: mergeCopy(g, cm)}
		}
	}
	return failures
}

// mergeVerdicts writes the merge of two tips of run's verdict chain: both
// are parents, the tree is the tree of the side checked last (the local one
// on a tie), and that side is the first parent, so the chain's history
// (store.VerdictHistory follows first parents) reads on from it.
func mergeVerdicts(g gitstore.Store, run string, local, remote gitstore.OID) (gitstore.OID, error) {
	lr, lc, err := verdictsAt(g, run, local)
	if err != nil {
		return "", err
	}
	rr, rc, err := verdictsAt(g, run, remote)
	if err != nil {
		return "", err
	}
	first, second, tree, newest := local, remote, lc.Tree, lr
	if rr.CheckedAt.After(lr.CheckedAt) {
		first, second, tree, newest = remote, local, rc.Tree, rr
	}
	sig := signature(later(lc.Committer.When, rc.Committer.When))
	return g.PutCommit(gitstore.Commit{Tree: tree, Parents: []gitstore.OID{first, second}, Author: sig, Committer: sig,
		Message: fmt.Sprintf("merge verdicts of run %s\n\nnewest %s\nchecked-at %s\n", run, first, newest.CheckedAt.UTC().Format(time.RFC3339))})
}

// ReceiptConflict is a receipt id stored with different content on the two
// sides of a pull: the local receipt stays in chain Chain ("sessions/<s>" or
// "index/<d>"); the remote one was left out of the merge.
type ReceiptConflict struct {
	Chain   string `json:"chain"`
	Receipt string `json:"receipt"`
}

// checkReceiptCommits checks each commit reachable from tip and not from
// oldTip ("" for none) on receipt chain name against its parents: chains
// only grow (an append adds one receipt to its parent's tree, a merge is
// the union of its parents' trees), so each path of a parent's tree is in
// the commit's tree, an append's with its parent's blob. A merge keeps the
// local blob of an id both sides hold with other bytes (unionReceiptTrees;
// its parents are sorted, so either may be the local one): a parent's
// other blob there is decoded as a receipt of that id instead.
// With the tip's tree checked (checkReceiptTree), every file of every new
// commit is then one the tip holds, or a receipt: a commit in the middle
// that adds a file a later one removes, invisible at the tip but shown by
// `git log -p` of the chain, is refused. An append reads the three trees
// it rewrote (its parent's were read as the parent's own), and the blob it
// adds: the binding line of an append of a version 2 receipt must be the
// binding the receipt's MAC covers (receipts.CheckAppendBinding). And every
// file a commit adds reached the chain by its own append commit
// (receipts.CheckAdded): an append adds only the receipt its first line
// names, a merge only files of its parents, so a receipt cannot come in
// beside another's append or by a merge, with no binding line checked.
func checkReceiptCommits(ctx context.Context, g gitstore.Store, t *gitstore.Transport, name string, tip, oldTip gitstore.OID) []string {
	commits, err := revList(ctx, g, t, tip, oldTip)
	if err != nil {
		return []string{fmt.Sprintf("receipt chain %s: %v", name, err)}
	}
	trees := make(map[gitstore.OID]gitstore.OID, len(commits)+1)
	treeOf := func(id gitstore.OID) (gitstore.OID, error) {
		if tr, ok := trees[id]; ok {
			return tr, nil
		}
		tr, err := commitTree(g, id)
		if err == nil {
			trees[id] = tr
		}
		return tr, err
	}
	// An append's trees are its child's parent trees: each is read once.
	listed := map[gitstore.OID][]gitstore.TreeEntry{}
	list := func(id gitstore.OID) ([]gitstore.TreeEntry, error) {
		if l, ok := listed[id]; ok {
			return l, nil
		}
		l, err := g.Tree(id)
		if err == nil {
			listed[id] = l
		}
		return l, err
	}
	var failures []string
	blob := func(id gitstore.OID) ([]byte, error) { return g.BlobAtMost(id, store.MaxRecordBytes) }
	for _, c := range commits {
		cm, err := g.Commit(c.ID)
		if err != nil {
			failures = append(failures, fmt.Sprintf("receipt chain %s: %v", name, err))
			continue
		}
		tree := cm.Tree
		trees[c.ID] = tree
		// an append names the receipt it adds on its first line; one that
		// names none would escape the binding check below
		if len(c.Parents) < 2 && !receipts.AppendMessage(receipts.RefPrefix+name, cm.Message) {
			line, _, _ := strings.Cut(cm.Message, "\n")
			failures = append(failures, fmt.Sprintf("receipt chain %s (commit %s): its message %q names no receipt (readproof writes `receipt ID` on a session chain, `index receipt ID` on an index chain): the commit was written by hand",
				name, c.ID, text.Printable(line)))
		}
		// the binding line of an append of a version 2 receipt is the
		// binding its MAC covers (docs/receipts.md, "Storage")
		if err := receipts.CheckAppendBinding(list, blob, receipts.RefPrefix+name, tree, cm.Message); err != nil {
			failures = append(failures, fmt.Sprintf("receipt chain %s (commit %s): %s", name, c.ID, text.Printable(err.Error())))
		}
		// every file the commit adds is the receipt its first line names,
		// or, for a merge, a file of one of its parents: a receipt
		// reaches a chain by its own append commit, checked above
		pts := make([]gitstore.OID, len(c.Parents))
		readAll := true
		for i, p := range c.Parents {
			if pts[i], err = treeOf(p); err != nil {
				failures = append(failures, fmt.Sprintf("receipt chain %s: %v", name, err))
				readAll = false
			}
		}
		if readAll {
			added, err := receipts.CheckAdded(list, receipts.RefPrefix+name, pts, tree, cm.Message)
			if err != nil {
				failures = append(failures, fmt.Sprintf("receipt chain %s (commit %s): %v", name, c.ID, err))
			}
			for _, a := range added {
				switch {
				case a.Unappended && a.Path == "":
					// names no receipt: reported by the message check above
				case a.Unappended:
					failures = append(failures, fmt.Sprintf("receipt chain %s (commit %s): %s; %s", name, c.ID, a.Why, handWrittenCommit(c.ID)))
				default:
					failures = append(failures, fmt.Sprintf("receipt chain %s (commit %s) %s: %s; %s", name, c.ID, text.Printable(a.Path), a.Why, handWritten(a.Path, c.ID)))
				}
			}
		}
		for i, p := range c.Parents {
			pt := pts[i]
			if pt == "" {
				continue
			}
			fail := func(path, format string, args ...any) {
				failures = append(failures, fmt.Sprintf("receipt chain %s (commit %s) %s: %s", name, c.ID, text.Printable(path), fmt.Sprintf(format, args...)))
			}
			shrunk, err := receipts.Shrinks(list, pt, tree)
			if err != nil {
				fail("", "%v", err)
			}
			for _, d := range shrunk {
				switch {
				case d.Gone:
					// the parent may be as readproof wrote it: the commit
					// that drops its file is the one no readproof writes
					fail(d.Path, "the file of parent %s is gone: a receipt chain only grows, so a file one commit adds and a later one removes is hidden from the tip while `git log -p` of the chain shows it; %s", p, handWrittenCommit(c.ID))
				case len(c.Parents) == 1:
					fail(d.Path, "blob %s of parent %s is replaced by %s: a receipt chain only grows; %s", d.Was, p, d.Now, handWritten(d.Path, c.ID))
				default:
					_, file := path.Split(d.Path)
					id, _ := strings.CutSuffix(file, ".json")
					data, err := g.BlobAtMost(d.Was, store.MaxRecordBytes)
					if err == nil {
						var r receipts.Receipt
						if r, err = receipts.DecodeReceipt(data); err == nil && r.ID != id {
							err = fmt.Errorf("the blob holds receipt %s", r.ID)
						}
					}
					if err != nil {
						fail(d.Path, "parent %s: %v", p, err)
					}
				}
			}
		}
	}
	return failures
}
