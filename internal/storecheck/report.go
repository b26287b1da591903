package storecheck

import (
	"fmt"
	"strings"

	"github.com/readproof/readproof/internal/text"
)

// Kind says how bad a problem is.
type Kind string

const (
	// Broken: the record is damaged or inconsistent (exit code 3).
	Broken Kind = "broken"
	// CouldNotCheck: a check could not run (I/O error, unreadable trust
	// settings); the store may be fine (exit code 4).
	CouldNotCheck Kind = "could-not-check"
	// Warning: a view that can be rebuilt is incomplete, or a record is
	// weaker than configured (an unsigned manifest); not a failure.
	Warning Kind = "warning"
)

// Problem is one finding. Subject names what it is about ("run run-a",
// "resource readproof://demo/x", "tag readproof://demo/x@prod", "ref
// refs/...", "journal", "store"); Object and Path name the git object and
// where it sits in a tree, when known.
type Problem struct {
	Kind    Kind   `json:"kind"`
	Check   string `json:"check"`
	Subject string `json:"subject"`
	Ref     string `json:"ref,omitempty"`
	Run     string `json:"run,omitempty"`
	Object  string `json:"object,omitempty"`
	Path    string `json:"path,omitempty"`
	Message string `json:"message"`
	// cause is the error a check that could not run met, when it had
	// one (Causes), for a hint that names it; never printed or encoded.
	cause error
}

// String is the one-line form the CLI prints.
func (p Problem) String() string {
	var b strings.Builder
	b.WriteString(string(p.Kind))
	b.WriteString(": ")
	b.WriteString(p.Subject)
	b.WriteString(": ")
	if p.Object != "" {
		fmt.Fprintf(&b, "object %s", p.Object)
		if p.Path != "" {
			fmt.Fprintf(&b, " (%s)", p.Path)
		}
		b.WriteString(": ")
	} else if p.Path != "" {
		fmt.Fprintf(&b, "%s: ", p.Path)
	}
	b.WriteString(p.Message)
	// a ref's name or a record's field may hold bytes a terminal acts on
	return text.Escape(b.String())
}

// Counts says how much was checked.
type Counts struct {
	Refs     int `json:"refs"`
	Runs     int `json:"runs"`
	OpenRuns int `json:"open_runs"`
	// AbortedRuns counts the aborted open runs (store.AbortedPrefix) gc
	// has not removed yet.
	AbortedRuns  int `json:"aborted_runs"`
	Resources    int `json:"resources"`
	Observations int `json:"observations"`
	Tags         int `json:"tags"`
	TagMoves     int `json:"tag_moves"`
	Commits      int `json:"commits"`
	Trees        int `json:"trees"`
	Blobs        int `json:"blobs"`
	// Snapshots is the number of distinct snapshot blobs the records name;
	// Rehashed how many of them were read and re-hashed.
	Snapshots     int   `json:"snapshots"`
	Rehashed      int   `json:"rehashed"`
	RehashedBytes int64 `json:"rehashed_bytes"`
	// Signed manifests, and how many signatures were verified.
	Signed   int `json:"signed"`
	Verified int `json:"signatures_verified"`
	// Verdicts is the number of verdict records whose MAC was checked.
	Verdicts int `json:"verdict_macs_verified"`
}

// Report is the outcome of Check.
type Report struct {
	// Mode is "structure", "read-data" or "subset N/M" / "subset P%".
	Mode     string    `json:"mode"`
	Trust    bool      `json:"trust_configured"`
	Counts   Counts    `json:"counts"`
	Problems []Problem `json:"problems"`
}

func (r *Report) count(k Kind) int {
	n := 0
	for _, p := range r.Problems {
		if p.Kind == k {
			n++
		}
	}
	return n
}

// Broken is the number of broken problems.
func (r *Report) Broken() int { return r.count(Broken) }

// CouldNotCheck is the number of checks that could not run.
func (r *Report) CouldNotCheck() int { return r.count(CouldNotCheck) }

// Causes are the errors the checks that could not run met, in the order
// of Problems: the command's hint names a cause that is not the store's
// (a limit on open files met: hint.OpenFiles).
func (r *Report) Causes() []error {
	var errs []error
	for _, p := range r.Problems {
		if p.Kind == CouldNotCheck && p.cause != nil {
			errs = append(errs, p.cause)
		}
	}
	return errs
}

// Warnings is the number of warnings.
func (r *Report) Warnings() int { return r.count(Warning) }

// OK reports a store with no broken problem and nothing left unchecked.
func (r *Report) OK() bool { return r.Broken() == 0 && r.CouldNotCheck() == 0 }

// Summary is one line describing the outcome.
func (r *Report) Summary() string {
	c := r.Counts
	var b strings.Builder
	switch {
	case r.Broken() > 0:
		fmt.Fprintf(&b, "store is broken: %d problem%s", r.Broken(), text.Plural(r.Broken(), "", "s"))
		if n := r.CouldNotCheck(); n > 0 {
			fmt.Fprintf(&b, ", %d check%s could not run", n, text.Plural(n, "", "s"))
		}
	case r.CouldNotCheck() > 0:
		fmt.Fprintf(&b, "store could not be fully checked: %d check%s could not run", r.CouldNotCheck(), text.Plural(r.CouldNotCheck(), "", "s"))
	default:
		b.WriteString("store ok")
	}
	open := fmt.Sprintf("%d open", c.OpenRuns)
	if c.AbortedRuns > 0 {
		open += fmt.Sprintf(", %d aborted", c.AbortedRuns)
	}
	fmt.Fprintf(&b, "; %d run%s, %s, %d resource%s (%d observation%s), %d tag%s; %d objects; %d/%d snapshots re-hashed (%s)",
		c.Runs, text.Plural(c.Runs, "", "s"), open, c.Resources, text.Plural(c.Resources, "", "s"), c.Observations, text.Plural(c.Observations, "", "s"),
		c.Tags, text.Plural(c.Tags, "", "s"), c.Commits+c.Trees+c.Blobs, c.Rehashed, c.Snapshots, r.Mode)
	if c.Signed > 0 {
		fmt.Fprintf(&b, "; %d/%d signatures verified", c.Verified, c.Signed)
	}
	if n := r.Warnings(); n > 0 {
		fmt.Fprintf(&b, "; %d warning%s", n, text.Plural(n, "", "s"))
	}
	return b.String()
}
