package share

import (
	"fmt"
	"strings"

	"github.com/readproof/readproof/gitstore"
	"github.com/readproof/readproof/identity"
	"github.com/readproof/readproof/internal/store"
	"github.com/readproof/readproof/internal/text"
	"github.com/readproof/readproof/manifest"
	"github.com/readproof/readproof/receipts"
)

// maxCommitBytes is the largest commit readproof reads from a remote, the
// bound on a manifest.json: a manifest commit's message has a line per
// entry, shorter than the entry in manifest.json, and every other commit
// readproof writes is a few hundred bytes. An object a remote names where a
// commit belongs is refused above it from its header, unread (a blob of
// gigabytes of zeros is a few megabytes on the wire).
const maxCommitBytes = manifest.MaxBytes

// notACommit says why tip, which a remote's ref names where readproof reads
// a commit (what names the chain: "observations of demo/doc"), is not one,
// or "" when it is: an object over maxCommitBytes, or of another type. git writes only a commit to a branch, but a ref file
// written by hand can name any object, and git's rev-list (which a chain's
// checks ask when the walk in-process cannot read the tip) peels an
// annotated tag to its commit: the chain's checks passed such a tip, and
// `verify` then called the store broken. A tip that passed is remembered
// (verified) across a pull's retries.
func notACommit(g gitstore.Store, what string, tip gitstore.OID, verified verifiedSet) string {
	err := verified.check("commit", tip, func() error {
		if err := gitstore.CheckObjectSize(g, tip, maxCommitBytes); err != nil {
			return err
		}
		kind, _, err := g.RawObject(tip)
		if err != nil {
			return err
		}
		if kind != "commit" {
			return fmt.Errorf("its tip %s is a %s, not a commit", tip, kind)
		}
		return nil
	})
	if err != nil {
		return fmt.Sprintf("%s: %v", what, err)
	}
	return ""
}

// tipFailures checks, with notACommit, every chain tip and the journal of
// rem that differs from base's (nil: every one), for the chains readproof
// writes (a ref name it does not write is ignored by pull and clone alike).
func tipFailures(g gitstore.Store, rem, base *state, verified verifiedSet) []string {
	if base == nil {
		base = newState()
	}
	var failures []string
	check := func(what string, tip, old gitstore.OID) {
		if tip == "" || tip == old {
			return
		}
		if f := notACommit(g, what, tip, verified); f != "" {
			failures = append(failures, f)
		}
	}
	for _, key := range sortedKeys(rem.resources) {
		if _, err := keyURI(key); err == nil {
			check("observations of "+key, rem.resources[key], base.resources[key])
		}
	}
	for _, key := range sortedKeys(rem.tags) {
		if _, _, err := splitTagKey(key); err == nil {
			check("tag moves of "+key, rem.tags[key], base.tags[key])
		}
	}
	for _, key := range sortedKeys(rem.receipts) {
		if _, _, ok := receiptChain(key); ok {
			check("receipts of "+key, rem.receipts[key], base.receipts[key])
		}
	}
	for _, run := range sortedKeys(rem.verdicts) {
		if identity.ValidateRunID(run) == nil {
			check("verdicts of run "+run, rem.verdicts[run], base.verdicts[run])
		}
	}
	check("journal", rem.main, base.main)
	return failures
}

// usualName reports whether name has the depth of a name readproof writes
// in its shared namespace (or is main): the number of '/' below the
// namespace is none in a run id and a verdict chain's run id, one in a
// resource key (NAMESPACE/PATH, PATH's '/' written '+') and a receipt chain
// (sessions/S, index/D), two in a tag (KEY/TAG), three in a proposal
// (KEY/TAG/NAME). Names of one depth are never a directory of one another.
func usualName(name string) bool {
	depth := func(prefix string, n int) bool { return strings.Count(name[len(prefix):], "/") == n }
	switch {
	case name == store.JournalRef:
		return true
	case strings.HasPrefix(name, store.RunsPrefix):
		return depth(store.RunsPrefix, 0)
	case strings.HasPrefix(name, store.VerdictsPrefix):
		return depth(store.VerdictsPrefix, 0)
	case strings.HasPrefix(name, store.ResourcesPrefix):
		return depth(store.ResourcesPrefix, 1)
	case strings.HasPrefix(name, receipts.RefPrefix):
		return depth(receipts.RefPrefix, 1)
	case strings.HasPrefix(name, store.TagsPrefix):
		return depth(store.TagsPrefix, 2)
	case strings.HasPrefix(name, store.ProposalsPrefix):
		return depth(store.ProposalsPrefix, 3)
	}
	return false
}

// dropUntrackable leaves out of refs, a remote's listing, every name
// readproof does not write (an unusual depth, or not adoptable) that is a
// directory of another listed name or lies below one: git cannot hold both
// as refs (refs/tags/readproof/runs/a-1 and runs/a-1/x), yet a remote lists
// them when its packed-refs was edited by hand, or when it is a server of
// its author's own. Its tracking ref could not be written, and the fetch of
// every pull failed on it. Names readproof writes never collide, so a
// listing of usual names alone is returned as it is, after one pass.
func dropUntrackable(refs []gitstore.Ref) []gitstore.Ref {
	usual := true
	for _, r := range refs {
		if !usualName(r.Name) {
			usual = false
			break
		}
	}
	if usual {
		return refs
	}
	names := make(map[string]bool, len(refs))
	dirs := map[string]bool{}
	for _, r := range refs {
		names[r.Name] = true
		for i := strings.LastIndexByte(r.Name, '/'); i > 0; i = strings.LastIndexByte(r.Name[:i], '/') {
			dirs[r.Name[:i]] = true
		}
	}
	below := func(name string) bool {
		for i := strings.LastIndexByte(name, '/'); i > 0; i = strings.LastIndexByte(name[:i], '/') {
			if names[name[:i]] {
				return true
			}
		}
		return false
	}
	out := make([]gitstore.Ref, 0, len(refs))
	for _, r := range refs {
		if (!usualName(r.Name) || !adoptable(r.Name)) && (dirs[r.Name] || below(r.Name)) {
			continue
		}
		out = append(out, r)
	}
	return out
}

// trackingTipFailures checks, with notACommit, every tracking ref of remote
// but its run refs (whose manifests the plan checks) that before, the
// tracking refs as they were (nil: none), did not hold at its value: a
// chain's, and also one under a name readproof does not write or a
// proposal branch, which a pull tracks and never adopts as a record, but
// which `verify` checks as a commit all the same (and `tag history` reads
// a proposal's). listed, when not nil, is the listing the tracking refs
// were written from (fetchListed): the refs are not read again.
func trackingTipFailures(g gitstore.Store, remote string, listed, before []gitstore.Ref, verified verifiedSet) ([]string, error) {
	base := RemotesPrefix + remote + "/"
	runs := base + "runs/"
	was := map[string]gitstore.OID{}
	for _, r := range before {
		if !strings.HasPrefix(r.Name, runs) {
			was[r.Name] = r.OID
		}
	}
	var failures []string
	check := func(name string, oid gitstore.OID) {
		if was[name] == oid {
			return
		}
		if f := notACommit(g, "ref "+text.Escape(strings.TrimPrefix(name, base)), oid, verified); f != "" {
			failures = append(failures, f)
		}
	}
	if listed != nil {
		specs := parseRefspecs(fetchRefspecs(remote))
		for _, r := range dropUntrackable(listed) {
			if strings.HasPrefix(r.Name, store.RunsPrefix) {
				continue
			}
			for _, spec := range specs {
				if dst, ok := spec.apply(r.Name); ok {
					check(dst, r.OID)
					break
				}
			}
		}
		return failures, nil
	}
	for _, ns := range []string{"resources/", "tags/", "receipts/", "verdicts/", "proposals/", "main"} {
		refs, err := g.Refs(base + ns)
		if err != nil {
			return nil, err
		}
		for _, r := range refs {
			check(r.Name, r.OID)
		}
	}
	return failures, nil
}
