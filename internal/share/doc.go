// Package share exchanges run history between readproof stores over git:
// remotes (kept in the store's git config), push, pull (fetch into
// refs/readproof-remotes/<remote>/, verify, then integrate), clone, and the
// conflicts a pull can leave (the same run id with two manifests, a tag moved
// on both sides) with the commands that resolve them. The rules are written in
// docs/sync.md.
//
// It owns the refs refs/readproof-remotes/*, refs/readproof-conflicts/* and
// refs/tags/readproof/conflicts/*, and writes merge commits on resource,
// receipt and verdict chains and the journal and resolving moves on tag chains, in the formats of
// docs/store-format.md. Everything that crosses the network runs through
// gitstore.Transport (the stock git binary), so authentication is git's.
//
// It imports store, gitstore, identity, manifest and receipts; it must not import
// go-git, the commands package or any adapter.
package share
