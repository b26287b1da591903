// Package storecheck verifies a whole readproof store, in the spirit of
// restic's check: every ref under the store's namespaces must name a complete
// object graph whose objects decode, every committed manifest must replay,
// every observation and tag move must decode and name content that hashes to
// what it records, the journal should reach every committed run, and manifest
// signatures must verify when trust is configured.
//
// The default (structure) check reads every commit, tree and metadata blob
// (reading an object recomputes its git id), confirms that every snapshot blob
// exists, and re-hashes a deterministic sample of snapshots; ReadData reads and
// re-hashes every blob; Subset spreads that work over several checks ("1/5",
// "2/5", ... or "10%"). Problems are either broken (the record is damaged) or
// could-not-check (an I/O error, unreadable trust settings), plus warnings for
// views that can be rebuilt, such as a journal that misses a run.
//
// It reads the store through package store and gitstore's Store interface,
// verifies signatures with package evidence, writes nothing, and must not
// import go-git or the command-line packages.
package storecheck
