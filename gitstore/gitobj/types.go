package gitobj

import (
	"errors"
	"fmt"
	"io"
	"time"
)

// OID is a git object id: 40 lower-case hex digits (SHA-1 repositories).
type OID string

// Mode is a tree entry mode. Only the two modes below are written, which keeps
// `git fsck --strict` quiet.
type Mode uint32

const (
	ModeFile Mode = 0o100644
	ModeDir  Mode = 0o040000
)

// TreeEntry is one entry of a tree object.
type TreeEntry struct {
	Name string
	Mode Mode
	OID  OID
}

// Signature is an author or committer identity.
type Signature struct {
	Name  string
	Email string
	When  time.Time
}

// Commit is a commit object. Signature, when set, is the armored signature
// stored in the commit's gpgsig header; it signs CommitPayload of the same
// commit with Signature empty.
type Commit struct {
	Tree      OID
	Parents   []OID
	Author    Signature
	Committer Signature
	Message   string
	Signature string
}

// Ref is a reference and the object it points at.
type Ref struct {
	Name string
	OID  OID
}

// RefUpdate is one compare-and-swap step of a transaction.
//
// Old is the value the ref must have now: "" means the ref must not exist.
// New is the value to store: "" deletes the ref.
type RefUpdate struct {
	Name string
	Old  OID
	New  OID
}

var (
	// ErrNotFound is returned when an object or ref does not exist.
	ErrNotFound = errors.New("not found")
	// ErrConflict is returned (wrapped in *ConflictError) when a ref did not
	// have the value a RefUpdate expected.
	ErrConflict = errors.New("ref changed concurrently")
	// ErrLocked is returned when a ref lock could not be taken before the
	// lock timeout.
	ErrLocked = errors.New("ref is locked by another process")
	// ErrNotStore is returned by Open for a path that is not a git repository.
	ErrNotStore = errors.New("not a readproof store")
	// ErrCorrupt is returned when an object cannot be decoded.
	ErrCorrupt = errors.New("corrupt object")
	// ErrTooLarge is returned by BlobAtMost when a blob is larger than the
	// caller allows (its content is then not read).
	ErrTooLarge = errors.New("object too large")
)

// ConflictError says which ref did not match and what it held.
type ConflictError struct {
	Ref      string
	Expected OID
	Actual   OID
}

func (e *ConflictError) Error() string {
	show := func(o OID) string {
		if o == "" {
			return "(absent)"
		}
		return string(o)
	}
	return fmt.Sprintf("ref %s: expected %s, found %s: %v", e.Ref, show(e.Expected), show(e.Actual), ErrConflict)
}

func (e *ConflictError) Unwrap() error { return ErrConflict }

// Reader is the read-only half of a Store: objects and refs, no writes.
// Packages that only check or show a store (storecheck) are given a Reader.
type Reader interface {
	// Path is the repository directory.
	Path() string

	// Blob returns a blob's bytes, or ErrNotFound.
	Blob(id OID) ([]byte, error)
	// BlobAtMost is Blob for a blob of at most max bytes: a larger one is
	// refused with an error wrapping ErrTooLarge, its size read from the
	// object's header before any content is inflated.
	BlobAtMost(id OID, max int64) ([]byte, error)
	// BlobTo writes a blob's content to w as it is inflated, a piece at a
	// time, and returns how many bytes it wrote: a caller that only hashes
	// or copies a blob of any size holds none of it whole. A blob of more
	// than max bytes (max < 0: no bound) is refused with an error wrapping
	// ErrTooLarge, from its header, before anything is written; an object
	// that is no blob is ErrNotFound, also before anything is written.
	// The content is checked against id on its way: when it does not
	// match, the error wraps ErrCorrupt and comes after every byte was
	// written, so the caller keeps nothing it made of the bytes unless the
	// error is nil. An error of w is returned as it is.
	BlobTo(id OID, max int64, w io.Writer) (int64, error)
	// Tree returns a tree's entries in git order, or ErrNotFound.
	Tree(id OID) ([]TreeEntry, error)
	// Commit returns a decoded commit, or ErrNotFound.
	Commit(id OID) (Commit, error)
	// RawObject returns an object's type ("blob", "tree", "commit", "tag")
	// and its uncompressed content, or ErrNotFound.
	RawObject(id OID) (kind string, data []byte, err error)
	// Has reports whether an object exists.
	Has(id OID) (bool, error)

	// Ref returns the value of a ref (loose, then packed-refs) or
	// ErrNotFound. It never scans every ref.
	Ref(name string) (OID, error)
	// Refs lists the refs whose names start with prefix, sorted by name.
	Refs(prefix string) ([]Ref, error)
}

// Store is a bare git repository used as readproof's evidence store.
//
// A Store is safe for use by several goroutines; several processes may use
// the same repository at once.
type Store interface {
	Reader

	// PutBlob writes data as a blob and returns its id. Writing bytes that
	// are already stored writes nothing.
	PutBlob(data []byte) (OID, error)
	// PutTree writes a tree. Entries may come in any order; PutTree sorts
	// them in git order and refuses names git fsck would flag.
	PutTree(entries []TreeEntry) (OID, error)
	// PutCommit writes a commit.
	PutCommit(c Commit) (OID, error)

	// Update applies the updates as one compare-and-swap transaction: it
	// locks every ref (git's <ref>.lock protocol), checks every Old value,
	// makes all objects durable, then renames the new values into place.
	// If any Old value does not match, nothing is changed and the error
	// wraps *ConflictError (errors.Is(err, ErrConflict)).
	//
	// The renames are not one atomic step: a process killed among them
	// leaves some refs moved and others not. The changes therefore become
	// visible in the order given, none before a change given ahead of it:
	// loose refs are renamed in that order, and packed-refs (which holds
	// the changes of refs written into it and the deletions of refs it
	// holds) is renamed into place in as many versions as loose moves
	// separate its changes, each where the last change it carries is
	// given. List a ref before any ref that records it (a run's ref before
	// the journal that lists the run, a new ref before the deletion of the
	// one it replaces), so an interrupted update leaves a ref nothing
	// records yet, never a record of a ref that is missing.
	Update(updates ...RefUpdate) error

	// Sync makes every object written so far durable.
	Sync() error
	// Close releases the repository.
	Close() error
}
