package gitstore

import "github.com/readproof/readproof/gitstore/gitobj"

// The value and interface types live in gitstore/gitobj, which does not
// import go-git; these aliases keep gitstore's API whole.
type (
	OID           = gitobj.OID
	Mode          = gitobj.Mode
	TreeEntry     = gitobj.TreeEntry
	Signature     = gitobj.Signature
	Commit        = gitobj.Commit
	Ref           = gitobj.Ref
	RefUpdate     = gitobj.RefUpdate
	ConflictError = gitobj.ConflictError
	// Store is gitobj.Store: a bare git repository used as readproof's
	// evidence store. Open and Init return go-git's implementation.
	Store = gitobj.Store
	// Reader is gitobj.Reader, the read-only half of a Store.
	Reader = gitobj.Reader
)

// Tree entry modes (gitobj's).
const (
	ModeFile = gitobj.ModeFile
	ModeDir  = gitobj.ModeDir
)

// Errors (gitobj's); match with errors.Is.
var (
	ErrNotFound = gitobj.ErrNotFound
	ErrConflict = gitobj.ErrConflict
	ErrLocked   = gitobj.ErrLocked
	ErrNotStore = gitobj.ErrNotStore
	ErrCorrupt  = gitobj.ErrCorrupt
	ErrTooLarge = gitobj.ErrTooLarge
)

// CommitPayload returns the bytes of a commit object as git hashes and signs
// them, without any signature header: the data a commit signature covers.
// (Implemented in gogit.go.)
