package receipts

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/readproof/readproof/gitstore/gitobj"
	"github.com/readproof/readproof/identity"
	"github.com/readproof/readproof/internal/text"
)

// A run id is a name, and two stores can give one name to two runs (a
// pull keeps the other store's manifest as a run conflict, docs/sync.md).
// A Binding says which of them a receipt's call was made for: the run its
// run id named in the store that issued it. It is written beside the
// receipt, on the commit that appends it to its chains (docs/receipts.md,
// "Storage"), and travels with them; the receipt itself, and its MAC, are
// unchanged.
type Binding struct {
	// Manifest is the manifest commit the run id named when the receipt
	// was issued (the run was committed); "" otherwise.
	Manifest string
	// RunStarted is when the run was started, when it was open at issue:
	// its manifest, once committed, records the same started_at. Zero
	// otherwise.
	RunStarted time.Time
}

// Commit message trailers of a bound receipt (docs/receipts.md).
const (
	trailerManifest   = "run-manifest: "
	trailerRunStarted = "run-started: "
)

// IsZero reports an unbound receipt: issued by a readproof that did not
// bind receipts, without a run, or for a run id the issuing store did not
// know.
func (b Binding) IsZero() bool { return b.Manifest == "" && b.RunStarted.IsZero() }

// Of reports whether a receipt so bound was made for the manifest whose
// commit is manifestID and whose run started at startedAt. An unbound
// receipt is of every manifest of its run id, as before receipts were
// bound.
func (b Binding) Of(manifestID string, startedAt time.Time) bool {
	switch {
	case b.Manifest != "":
		return b.Manifest == manifestID
	case !b.RunStarted.IsZero():
		return b.RunStarted.Equal(startedAt)
	}
	return true
}

// trailer is the line the binding adds to an append commit's message, ""
// for none.
func (b Binding) trailer() string {
	switch {
	case b.Manifest != "":
		return trailerManifest + b.Manifest + "\n"
	case !b.RunStarted.IsZero():
		return trailerRunStarted + b.RunStarted.UTC().Format(time.RFC3339Nano) + "\n"
	}
	return ""
}

// parseBinding reads the binding of an append commit's message. A trailer
// that does not parse binds nothing (the receipt reads as unbound, as it
// would to a readproof that does not know trailers).
func parseBinding(msg string) Binding {
	var b Binding
	for line := range strings.Lines(msg) {
		line = strings.TrimSuffix(line, "\n")
		if v, ok := strings.CutPrefix(line, trailerManifest); ok && identity.IsObjectID(v) {
			b.Manifest = v
		} else if v, ok := strings.CutPrefix(line, trailerRunStarted); ok {
			if t, err := time.Parse(time.RFC3339Nano, v); err == nil {
				b.RunStarted = t
			}
		}
	}
	if b.Manifest != "" {
		b.RunStarted = time.Time{}
	}
	return b
}

// validate checks a BoundVersion receipt's binding against the format:
// at most one of its two members, only with a run id, a manifest as a
// commit id, a start in the range of int64 Unix nanoseconds.
func (b Binding) validate(run string) error {
	switch {
	case b.IsZero():
		return nil
	case run == "":
		return errors.New("a binding (run_manifest, run_started) needs a run id")
	case b.Manifest != "" && !b.RunStarted.IsZero():
		return errors.New("run_manifest and run_started exclude each other")
	case b.Manifest != "" && !identity.IsObjectID(b.Manifest):
		return fmt.Errorf("run_manifest %q is not a commit id (40 lower-case hex digits)", truncate(b.Manifest, 80))
	case b.Manifest != "":
		return nil
	}
	if err := validTime(b.RunStarted); err != nil {
		return fmt.Errorf("run_started: %w", err)
	}
	return nil
}

// String names the binding in a report: "run-manifest: ID",
// "run-started: TIME" or "no binding line".
func (b Binding) String() string {
	if t := b.trailer(); t != "" {
		return strings.TrimSuffix(t, "\n")
	}
	return "no binding line"
}

// ErrBindingEdited is wrapped (with ErrTampered and ErrCorrupt) when the
// binding line of a version 2 receipt's append commit is not the binding
// the receipt's MAC covers: the commit message was edited, the line
// stripped, or the append commit rewritten (docs/receipts.md, "Storage").
var ErrBindingEdited = errors.New("binding line edited")

// bindingLines returns the binding lines of an append commit's message,
// in order, each with its newline.
func bindingLines(msg string) string {
	var out strings.Builder
	for line := range strings.Lines(msg) {
		if strings.HasPrefix(line, trailerManifest) || strings.HasPrefix(line, trailerRunStarted) {
			out.WriteString(line)
			if !strings.HasSuffix(line, "\n") {
				out.WriteByte('\n')
			}
		}
	}
	return out.String()
}

// bindingError is a binding line that is not the one a version 2
// receipt's MAC covers. It is ErrBindingEdited, ErrTampered and ErrCorrupt.
type bindingError struct{ msg string }

func (e *bindingError) Error() string { return e.msg }

func (e *bindingError) Is(target error) bool {
	return target == ErrBindingEdited || target == ErrTampered || target == ErrCorrupt
}

// CheckBindingLine checks the message of the commit that appended a
// version 2 receipt to chain ref: its binding lines must be exactly the
// one the receipt's binding gives (none for an unbound receipt). A version
// 1 receipt has no binding under its MAC and passes. The error is
// ErrBindingEdited (and ErrTampered, ErrCorrupt) and names the receipt,
// its session and both bindings.
func CheckBindingLine(r Receipt, ref, msg string) error {
	if r.version() != BoundVersion {
		return nil
	}
	want := r.Bound.trailer()
	got := bindingLines(msg)
	if got == want {
		return nil
	}
	var shown string
	switch n := strings.Count(got, "\n"); {
	case n == 0:
		shown = "has no binding line (stripped)"
	case n > 1:
		shown = fmt.Sprintf("has %d binding lines", n)
	default:
		shown = fmt.Sprintf("says %q", text.Printable(truncate(strings.TrimSuffix(got, "\n"), 120)))
	}
	return &bindingError{fmt.Sprintf("receipt %s of session %q: tampered binding: the commit appending it to %s %s, but the binding its MAC covers is %q; "+
		"the commit message was edited (restore the chain from a clone or a backup; the receipt counts for the run its MAC names)",
		r.ID, r.Session, ref, shown, r.Bound.String())}
}

// errNoAppendCommit is the report for a version 2 receipt whose chain has
// no commit naming it on its first line.
func errNoAppendCommit(r Receipt, ref string) error {
	return &bindingError{fmt.Sprintf("receipt %s of session %q: tampered binding: no commit of %s appends it (a first line was edited), so its binding line (%q) is gone; "+
		"restore the chain from a clone or a backup (the receipt counts for the run its MAC names)",
		r.ID, r.Session, ref, r.Bound.String())}
}

// AppendMessage reports whether msg is the message of a commit appending a
// receipt to chain ref: its first line `receipt ID` on a session chain,
// `index receipt ID` on an index chain, ID a well-formed receipt id.
func AppendMessage(ref, msg string) bool {
	id, ok, _ := appendLine(ref, msg)
	return ok && ValidID(id)
}

// appendLine cuts the first line of msg, a commit message on chain ref,
// after the chain's append prefix (`receipt ` on a session chain, `index
// receipt ` on an index chain) as strings.CutPrefix does: id is the whole
// line and ok false when the prefix is missing. path gives a receipt's path
// in the chain's tree; it is nil when ref is no receipt chain.
func appendLine(ref, msg string) (id string, ok bool, path func(string) []string) {
	line, _, _ := strings.Cut(msg, "\n")
	switch {
	case strings.HasPrefix(ref, SessionRefPrefix):
		id, ok = strings.CutPrefix(line, "receipt ")
		return id, ok, sessionPath
	case strings.HasPrefix(ref, IndexRefPrefix):
		id, ok = strings.CutPrefix(line, "index receipt ")
		return id, ok, indexPath
	}
	return "", false, nil
}

// CheckAppendBinding is the binding check of one commit of chain ref (a
// session or index chain ref) for a reader without a Ledger (pull, clone,
// the guarded remote): when msg, the commit's message, appends a receipt
// (its first line) that the commit's tree holds at its path and that
// decodes as a version 2 receipt, its binding lines must be the binding
// that receipt's MAC covers (CheckBindingLine). Anything else passes: the
// chain's other checks report a missing or undecodable receipt, and a
// first line that names none as AppendMessage reads it (a bare id too). list reads
// a tree, blob a blob (bounded by the caller).
func CheckAppendBinding(list func(gitobj.OID) ([]gitobj.TreeEntry, error), blob func(gitobj.OID) ([]byte, error), ref string, tree gitobj.OID, msg string) error {
	id, ok, pathOf := appendLine(ref, msg)
	if !ok || !ValidID(id) {
		return nil
	}
	path := pathOf(id)
	cur := tree
	for _, name := range path {
		entries, err := list(cur)
		if err != nil {
			return fmt.Errorf("reading receipt tree %s: %w", cur, err)
		}
		next := gitobj.OID("")
		for _, e := range entries {
			if e.Name == name {
				next = e.OID
			}
		}
		if next == "" {
			return nil
		}
		cur = next
	}
	data, err := blob(cur)
	if err != nil {
		return nil
	}
	r, err := DecodeReceipt(data)
	if err != nil || r.ID != id {
		return nil
	}
	return CheckBindingLine(r, ref, msg)
}
