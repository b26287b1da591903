package store

import (
	"errors"
	"fmt"
	"slices"

	"github.com/readproof/readproof/evidence"
	"github.com/readproof/readproof/internal/text"
)

// ExportKeyWarning is a key the store checks of an export could not load
// (so that a check ran weaker: the commit signature for validity only, a
// MAC unchecked): Text is said, with Hint when not "", when the check
// named Check ran ("" for always).
type ExportKeyWarning struct {
	Check, Text, Hint string
}

// ExportOutcome is what an export that no store check stops says beside
// the bundle it writes (ExportOutcomeOf): the key warnings whose check ran,
// the store checks' warnings and hints (ExportWarnings), and the replay's
// (ExportReplayWarning, "" when it matched).
type ExportOutcome struct {
	Keys               []ExportKeyWarning
	Warnings, Hints    []string
	Replay, ReplayHint string
}

// AllWarnings are o's warnings in the order the MCP tool's result and
// `evidence export --json` list them: the store checks', the replay's,
// then the keys', each escaped as stderr says it (text.Escape: a check's
// detail may quote an error that names a path with a control or bidi
// character in it, which JSON's escaping alone decodes back to).
func (o ExportOutcome) AllWarnings() []string { return o.AllWarningsWorded(nil) }

// AllWarningsWorded is AllWarnings with each warning worded by clean (when
// not nil) before it is escaped: a text that hides paths (the MCP server's
// over HTTP) must read them as they were said, since escaped, a tab before
// a path is the two characters \t, which start no word.
func (o ExportOutcome) AllWarningsWorded(clean func(string) string) []string {
	w := slices.Clone(o.Warnings)
	if o.Replay != "" {
		w = append(w, o.Replay)
	}
	for _, k := range o.Keys {
		w = append(w, k.Text)
	}
	for i := range w {
		if clean != nil {
			w[i] = clean(w[i])
		}
		w[i] = text.Escape(w[i])
	}
	return w
}

// AllHints are the hints of AllWarnings, in their order, each once.
func (o ExportOutcome) AllHints() []string {
	h := slices.Clone(o.Hints)
	if o.ReplayHint != "" {
		h = append(h, o.ReplayHint)
	}
	for _, k := range o.Keys {
		if k.Hint != "" && !slices.Contains(h, k.Hint) {
			h = append(h, k.Hint)
		}
	}
	return h
}

// ExportStopped is the error of an export that a store check stops:
// refused as a record readproof did not write or cannot vouch for
// (ExportRefusal, exit 3), or a store it could not read (ExportCouldNotRead,
// exit 4, wrapping ErrCouldNotRead). It is Err (with its hint), and names
// the run (as a message names it) and every check that stops it.
type ExportStopped struct {
	Err error
	// Run is the run as a message names it (NamedRunPhrase).
	Run string
	// CouldNotRead: the checks could not read the store (Err wraps
	// ErrCouldNotRead); false: they refuse the record.
	CouldNotRead bool
	// First is the check Err names; More the others that stop it, for
	// the caller to say.
	First evidence.Check
	More  []evidence.Check
}

func (e *ExportStopped) Error() string { return e.Err.Error() }
func (e *ExportStopped) Unwrap() error { return e.Err }

// Further says each stopping check after the first (More), as the command
// says each on stderr and the MCP tool's error names them: "run RUN: store
// check NAME failed: DETAIL", or "could not read the store" for "failed"
// when CouldNotRead.
func (e *ExportStopped) Further() []string {
	what := "failed"
	if e.CouldNotRead {
		// not a forged record: one the store would not let us read
		what = "could not read the store"
	}
	out := make([]string, 0, len(e.More))
	for _, c := range e.More {
		out = append(out, fmt.Sprintf("run %s: store check %s %s: %s", e.Run, c.Name, what, c.Detail))
	}
	return out
}

// ExportOutcomeOf is the one sequence `evidence export` and the MCP export
// tool follow on the checks of ExportEvidenceChecked of target (st its
// statement): a failure that refuses the record stops it first
// (ExportRefusal), then one that could not read the store
// (ExportCouldNotRead), either as an *ExportStopped; else the outcome says
// what is warned of beside the bundle, keys the key warnings of the
// caller (its texts: the command names its files, the tool hides the
// server's), each kept when its check ran.
func ExportOutcomeOf(target string, st *evidence.Statement, checks []evidence.Check, keys []ExportKeyWarning) (ExportOutcome, error) {
	run := NamedRunPhrase(target, st.Predicate.RunID)
	if more, err := ExportRefusal(target, run, st.Predicate.ManifestID, checks); err != nil {
		first, _, _ := firstFailure(checks, ExportRefuses)
		return ExportOutcome{}, &ExportStopped{Err: err, Run: run, First: *first, More: more}
	}
	if more, err := ExportCouldNotRead(target, run, st.Predicate.ManifestID, checks); err != nil {
		first, _, _ := firstFailure(checks, exportStops)
		return ExportOutcome{}, &ExportStopped{Err: err, Run: run, CouldNotRead: true, First: *first, More: more}
	}
	var o ExportOutcome
	for _, k := range keys {
		if k.Check == "" || slices.ContainsFunc(checks, func(c evidence.Check) bool { return c.Name == k.Check }) {
			o.Keys = append(o.Keys, k)
		}
	}
	o.Warnings, o.Hints = ExportWarnings(run, checks)
	o.Replay, o.ReplayHint = ExportReplayWarning(run, st.Predicate.Replay)
	return o, nil
}

// ExportReplayUnread is the error of an export whose replay the store
// would not let read, before any store check ran (it wraps
// ErrCouldNotRead): Err, with its hint, and the run id and manifest the
// manifest read records, which Err names in its text, for a caller that
// gives them as fields (`evidence export --json`).
type ExportReplayUnread struct {
	Err               error
	RunID, ManifestID string
}

func (e *ExportReplayUnread) Error() string { return e.Err.Error() }
func (e *ExportReplayUnread) Unwrap() error { return e.Err }

// IsExportReplayUnread returns the *ExportReplayUnread err is or wraps, nil
// if none.
func IsExportReplayUnread(err error) *ExportReplayUnread {
	var u *ExportReplayUnread
	if errors.As(err, &u) {
		return u
	}
	return nil
}

// IsExportStopped returns the *ExportStopped err is or wraps, nil if none.
func IsExportStopped(err error) *ExportStopped {
	var s *ExportStopped
	if errors.As(err, &s) {
		return s
	}
	return nil
}
