package mcpserver

// Runs: start, mount (with proof of read), commit and the manifest.

import (
	"context"
	"fmt"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/readproof/readproof/identity"
	"github.com/readproof/readproof/internal/hint"
	"github.com/readproof/readproof/internal/proofread"
	"github.com/readproof/readproof/internal/store"
	"github.com/readproof/readproof/manifest"
)

// RunOutput is an opened run.
type RunOutput struct {
	RunID string `json:"run_id"`
	Open  bool   `json:"open"`
	Receipt
}

func (s *Server) runStart(_ context.Context, c *call, in RunInput) (*RunOutput, reply, error) {
	if err := c.st.StartRun(in.RunID); err != nil {
		return nil, reply{}, err
	}
	return &RunOutput{RunID: in.RunID, Open: true},
		reply{text: fmt.Sprintf("Started run %s. Mount documents with readproof_run_mount, then commit with readproof_run_commit.", in.RunID)}, nil
}

// MountOutput is a document recorded in a run.
type MountOutput struct {
	RunID    string          `json:"run_id"`
	Position int             `json:"position" jsonschema:"the entry's position in the run, from 0"`
	Probe    *manifest.Probe `json:"probe,omitempty" jsonschema:"set when a probe line was appended: the delivered bytes differ from the snapshot by that line"`
	Document
	Warned
	Receipt
}

func (s *Server) runMount(ctx context.Context, c *call, in MountInput) (*MountOutput, reply, error) {
	var d *store.Delivery
	said := "Mounted"
	if in.Position != nil {
		var err error
		if d, err = recorded(c.st, in); err != nil {
			return nil, reply{}, err
		}
		if d != nil {
			said = "Already mounted (nothing recorded again)"
		}
	}
	if d == nil {
		var err error
		if d, err = mount(ctx, c.st, in.RunID, in.URI, in.Probe, in.Position); err != nil {
			return nil, reply{}, err
		}
	}
	content := d.Content
	doc, inl := documentOf(d, content, s.declaredForClient(c.req))
	text := fmt.Sprintf("%s at position %d of run %s. %s", said, d.Position, in.RunID, documentLine(doc))
	return &MountOutput{RunID: in.RunID, Position: d.Position, Probe: d.Probe, Document: doc}, reply{text: text, meta: documentMeta(doc, inl)}, nil
}

// CommitOutput is a committed run.
type CommitOutput struct {
	ManifestID string    `json:"manifest_id" jsonschema:"the manifest id (40 hex): cite it"`
	RunID      string    `json:"run_id"`
	Entries    int       `json:"entries"`
	CreatedAt  time.Time `json:"created_at"`
	Receipt
}

func (s *Server) runCommit(ctx context.Context, c *call, in RunInput) (*CommitOutput, reply, error) {
	m, err := c.st.CommitRunContext(ctx, in.RunID)
	if err != nil {
		return nil, reply{}, err
	}
	return &CommitOutput{ManifestID: m.ID, RunID: m.RunID, Entries: len(m.Entries), CreatedAt: m.CreatedAt},
		reply{text: fmt.Sprintf("Committed manifest %s for run %s (%d entr%s).", m.ID, m.RunID, len(m.Entries), pluralY(len(m.Entries))),
			meta: mcp.Meta{"manifest_id": m.ID}}, nil
}

// ManifestOutput is a committed manifest.
type ManifestOutput struct {
	Format     string           `json:"format" jsonschema:"the manifest format version (readproof-manifest/1), as readproof --json manifest prints it"`
	ManifestID string           `json:"manifest_id"`
	RunID      string           `json:"run_id"`
	StartedAt  time.Time        `json:"started_at"`
	CreatedAt  time.Time        `json:"created_at"`
	Caller     string           `json:"caller,omitempty" jsonschema:"who committed the run: the token name when it came over mcp --http"`
	Entries    []manifest.Entry `json:"entries" jsonschema:"the entries of this page (every entry unless next_entry_offset is set)"`
	Extra      map[string]any   `json:"extra,omitempty" jsonschema:"data added by optional features (proof-of-read verdicts)"`
	Page
	Receipt
}

func (s *Server) manifest(_ context.Context, c *call, in ManifestInput) (*ManifestOutput, reply, error) {
	// Only the page's entries are read whole: the others are checked
	// and kept as a View (their count, and the probed ones for
	// ManifestViewPart).
	m, err := c.st.ManifestSome(in.Target, s.pageKeep(in.PageInput))
	if err != nil {
		return nil, reply{}, err
	}
	_, _, pg, err := s.page("manifest "+in.Target, len(m.Entries), in.PageInput)
	if err != nil {
		return nil, reply{}, err
	}
	out := &ManifestOutput{Format: manifest.Format, ManifestID: m.ID, RunID: m.RunID, StartedAt: m.StartedAt, CreatedAt: m.CreatedAt, Caller: m.Caller,
		Entries: m.Kept, Page: pg}
	if out.Entries == nil {
		out.Entries = []manifest.Entry{}
	}
	clean := s.declaredForClient(c.req)
	for i := range out.Entries {
		out.Entries[i].Provenance = redactProvenance(out.Entries[i].Provenance, clean)
	}
	por, _, err := proofread.ManifestViewPart(c.st, &m.View)
	if err != nil {
		return nil, reply{}, err
	}
	if por != nil {
		out.Extra = map[string]any{proofread.ExtraKey: por}
	}
	var uris []string
	for _, e := range out.Entries {
		r := e.URI
		if e.Ref != "" {
			r += "@" + e.Ref
		}
		uris = append(uris, r)
	}
	text := fmt.Sprintf("Manifest %s of run %s, created %s: %d entr%s", m.ID, m.RunID, m.CreatedAt.UTC().Format(time.RFC3339), len(m.Entries), pluralY(len(m.Entries)))
	if len(uris) > 0 {
		text += ": " + some(uris, ", ")
	}
	return out, reply{text: text + "." + pg.note(len(out.Entries))}, nil
}

// recorded is, for a mount that names its position, the entry the run
// already holds there when it is the same document (a retry whose first
// call was recorded), with its bytes; nil when the position is the next
// one. Another document there, or a position past the next, is a conflict
// naming the position to pass.
func recorded(st *store.Store, in MountInput) (*store.Delivery, error) {
	u, err := identity.ParseURI(in.URI)
	if err != nil {
		return nil, hint.With(err, identity.URIHint(in.URI, true))
	}
	run, err := st.OpenRunNamed(in.RunID)
	if err != nil {
		return nil, err
	}
	pos, n := *in.Position, len(run.Entries)
	switch {
	case pos < 0 || pos > n:
		return nil, hint.With(fmt.Errorf("run %s has %d entr%s: position %d is not the next one", in.RunID, n, pluralY(n), pos),
			fmt.Sprintf("pass position %d to mount the next document (a retry passes the position of its first call)", n))
	case pos == n:
		return nil, nil
	}
	e := run.Entries[pos]
	ref := e.URI
	if e.Ref != "" {
		ref += "@" + e.Ref
	}
	if ref != u.Ref() {
		return nil, hint.With(fmt.Errorf("position %d of run %s holds %s, not %s", pos, in.RunID, ref, u.Ref()),
			fmt.Sprintf("pass position %d to mount another document", n))
	}
	if e.Probe != nil {
		return nil, hint.With(fmt.Errorf("position %d of run %s already holds %s, mounted with a probe line", pos, in.RunID, ref),
			"its probed bytes are delivered once; mount it again at the next position for another probe line")
	}
	content, err := st.Content(e.Snapshot)
	if err != nil {
		return nil, err
	}
	return &store.Delivery{Entry: e, Content: content}, nil
}

// mount records ref in the open run, with a proof-of-read probe line when
// probed is set (the key is [probe] key or the default location), as
// `readproof run mount [--probe]` does; at *at when at is set, or not at
// all when a concurrent mount took that position first. The delivery's
// Content holds the bytes handed to the model.
func mount(ctx context.Context, st *store.Store, runID, ref string, probed bool, at *int) (*store.Delivery, error) {
	if !probed {
		if at == nil {
			return st.Mount(ctx, runID, ref)
		}
		return st.MountWithPosition(ctx, runID, ref, func(d *store.Delivery) error {
			if d.Position != *at {
				return hint.With(fmt.Errorf("position %d of run %s was taken by another mount meanwhile", *at, runID),
					fmt.Sprintf("retry with position %d: if the other mount was this document, its entry comes back", *at))
			}
			return nil
		})
	}
	keys, _, err := proofread.LoadKeys("", st)
	if err != nil {
		return nil, err
	}
	pm, err := proofread.Mount(ctx, st, keys, runID, ref)
	if err != nil {
		return nil, err
	}
	return pm.Delivery, nil
}
