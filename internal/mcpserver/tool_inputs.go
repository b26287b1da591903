package mcpserver

// The input types of the tools, one per argument shape.

import (
	"github.com/readproof/readproof/identity"
)

// Inputs ---------------------------------------------------------------------

// NoInput is the input of tools without arguments.
type NoInput struct{}

// URIInput names one resource, optionally with @tag.
type URIInput struct {
	URI string `json:"uri" jsonschema:"readproof://NAMESPACE/PATH, optionally with @TAG"`
}

// PlainURIInput names one resource, without @tag.
type PlainURIInput struct {
	URI string `json:"uri" jsonschema:"readproof://NAMESPACE/PATH (no @TAG)"`
}

// RunInput names a run.
type RunInput struct {
	RunID string `json:"run_id" jsonschema:"run id: letters, digits, '.', '_' and '-', starting with a letter or digit"`
}

func (in RunInput) runOf() string { return in.RunID }

// MountInput names a run and a document.
type MountInput struct {
	RunID string `json:"run_id" jsonschema:"id of an open run (see readproof_run_start)"`
	URI   string `json:"uri" jsonschema:"readproof://NAMESPACE/PATH, optionally with @TAG"`
	Probe bool   `json:"probe,omitempty" jsonschema:"append a proof-of-read probe line to the delivered text (needs a probe key); check the answer later with readproof_probe_check"`
	// Position makes the mount safe to retry (see runMount).
	Position *int `json:"position,omitempty" jsonschema:"the position this document is to take: the number of entries mounted so far (0 for the first). Pass it to retry safely: when the run already holds this document there, that entry is returned and nothing is recorded again"`
}

func (in MountInput) runOf() string { return in.RunID }

// runOfTarget is the run a target names for its receipt: a run id, not a
// manifest id.
func runOfTarget(target string) string {
	if identity.IsObjectID(target) {
		return ""
	}
	return target
}

// ManifestInput names a committed run and a page of its entries.
type ManifestInput struct {
	Target string `json:"target" jsonschema:"run id or manifest id (40 hex)"`
	PageInput
}

func (in ManifestInput) runOf() string { return runOfTarget(in.Target) }

// DiffInput names two committed runs and a page of their changes.
type DiffInput struct {
	A string `json:"a" jsonschema:"the earlier run: run id or manifest id"`
	B string `json:"b" jsonschema:"the later run: run id or manifest id"`
	PageInput
}

// PageInput selects a page of a run's entries (manifest, replay) or of
// two runs' changes (diff).
type PageInput struct {
	EntryOffset int `json:"entry_offset,omitempty" jsonschema:"first entry to return, from 0 (default 0); pass next_entry_offset to continue"`
	EntryLimit  int `json:"entry_limit,omitempty" jsonschema:"most entries to return; 0 (default) returns every entry, up to the server's page bound when it has one (a server over HTTP does)"`
}

// ReplayInput selects what replay returns.
type ReplayInput struct {
	Target         string `json:"target" jsonschema:"run id or manifest id (40 hex)"`
	IncludeContent bool   `json:"include_content,omitempty" jsonschema:"return the replayed bytes of each entry (text, or base64 for binary content)"`
	Position       *int   `json:"position,omitempty" jsonschema:"with include_content: return the content of this entry position only"`
	Offset         int64  `json:"offset,omitempty" jsonschema:"with include_content: first byte to return of each selected entry (default 0)"`
	MaxBytes       int64  `json:"max_bytes,omitempty" jsonschema:"with include_content: most bytes to return per entry; 0 (default) returns every byte. Text windows end on a character boundary"`
	PageInput
}

func (in ReplayInput) runOf() string { return runOfTarget(in.Target) }

// TagSetInput points a tag.
type TagSetInput struct {
	URI      string `json:"uri" jsonschema:"readproof://NAMESPACE/PATH, or URI@TAG naming the tag"`
	Tag      string `json:"tag,omitempty" jsonschema:"tag name (letters, digits, '.', '_', '-'); omit when uri carries @TAG"`
	Snapshot string `json:"snapshot,omitempty" jsonschema:"snapshot id or content hash (or a prefix of at least 4 hex digits) to tag; default the current snapshot"`
}

// TagInput names a tag.
type TagInput struct {
	URI string `json:"uri" jsonschema:"readproof://NAMESPACE/PATH, or URI@TAG naming the tag"`
	Tag string `json:"tag,omitempty" jsonschema:"tag name; omit when uri carries @TAG"`
}

// EvidenceInput names a run to export.
type EvidenceInput struct {
	Target      string `json:"target" jsonschema:"run id or manifest id (40 hex)"`
	WithContent bool   `json:"with_content,omitempty" jsonschema:"embed every delivered byte (base64) in the bundle"`
}

func (in EvidenceInput) runOf() string { return runOfTarget(in.Target) }

// ClaimsInput carries the receipt ids an agent cites.
type ClaimsInput struct {
	Claims  string `json:"claims" jsonschema:"the text citing receipt ids (rcpt_...), or a JSON list of receipt ids"`
	Session string `json:"session,omitempty" jsonschema:"receipt session to check against; default this server's session"`
}

// ProbeInput carries an answer to check.
type ProbeInput struct {
	Target string `json:"target" jsonschema:"run id or manifest id of the probed run"`
	Answer string `json:"answer" jsonschema:"the answer text that should contain the sentinels"`
}

func (in ProbeInput) runOf() string { return runOfTarget(in.Target) }
