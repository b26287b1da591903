package share

import (
	"fmt"

	"github.com/readproof/readproof/gitstore"
	"github.com/readproof/readproof/identity"
	"github.com/readproof/readproof/manifest"
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
