// Package storecheck verifies a whole readproof store, in the spirit of
// restic's check: every ref under the store's namespaces must name a complete
// object graph whose objects decode, every committed manifest must replay,
// every observation and tag move must decode and name content that hashes to
// what it records, main must be a journal whose every recorded run still has
// its run ref and whose every recorded check is still in its verdict chain,
// every verdict record and receipt (session and index chains) must decode and
// fit, verdict MACs must verify when the probe key is given, and manifest
// signatures must verify against their own key, and against the allowed
// signers when trust is configured.
//
// The default (structure) check reads every commit, tree and metadata blob
// (reading an object recomputes its git id), confirms that every snapshot blob
// exists, and re-hashes a deterministic sample of snapshots; ReadData reads and
// re-hashes every blob and checks git's own checksums (each loose object's
// zlib stream and SHA-1, each pack's trailer); Subset spreads that work over several checks ("1/5",
// "2/5", ... or "10%"). Problems are either broken (the record is damaged) or
// could-not-check (an I/O error, unreadable trust settings), plus warnings for
// views that can be rebuilt, such as a journal that misses a run.
//
// It reads the store through package store and gitstore's Store interface,
// verifies signatures with package evidence, writes nothing, and must not
// import go-git or the command-line packages.
package storecheck
