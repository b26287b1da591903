// Package gitobj holds gitstore's value and interface types (object ids,
// tree entries, commits, refs, the Store interface and its errors) and the
// small checks on them, without any implementation. Packages that only pass
// object ids around or accept a Store import gitobj; only gitstore itself
// imports go-git.
//
// gitobj imports nothing outside the standard library; the layering test in
// internal/layering enforces it.
package gitobj
