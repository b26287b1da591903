package receipts

import (
	"errors"

	"github.com/readproof/readproof/gitstore/gitobj"
)

// ErrReadOnly is returned by the writes of a Ledger made by
// NewReadOnlyLedger.
var ErrReadOnly = errors.New("receipts: the ledger is read-only")

// NewReadOnlyLedger returns a Ledger that reads r, for checks of a
// repository the caller only reads (a plain clone's remote-tracking refs,
// for example); Append and every other write fail with ErrReadOnly.
func NewReadOnlyLedger(r gitobj.Reader) *Ledger { return &Ledger{store: readOnly{r}} }

type readOnly struct{ gitobj.Reader }

func (readOnly) PutBlob([]byte) (gitobj.OID, error)             { return "", ErrReadOnly }
func (readOnly) PutTree([]gitobj.TreeEntry) (gitobj.OID, error) { return "", ErrReadOnly }
func (readOnly) PutCommit(gitobj.Commit) (gitobj.OID, error)    { return "", ErrReadOnly }
func (readOnly) Update(...gitobj.RefUpdate) error               { return ErrReadOnly }
func (readOnly) Sync() error                                    { return nil }
func (readOnly) Close() error                                   { return nil }
