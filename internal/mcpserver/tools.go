package mcpserver

import (
	"fmt"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/readproof/readproof/internal/text"
)

// Tool names.
const (
	ToolResourcesList      = "readproof_resources_list"
	ToolResolve            = "readproof_resolve"
	ToolHistory            = "readproof_history"
	ToolRunStart           = "readproof_run_start"
	ToolRunMount           = "readproof_run_mount"
	ToolRunCommit          = "readproof_run_commit"
	ToolManifest           = "readproof_manifest"
	ToolDiff               = "readproof_diff"
	ToolReplay             = "readproof_replay"
	ToolTagSet             = "readproof_tag_set"
	ToolTagList            = "readproof_tag_list"
	ToolTagDelete          = "readproof_tag_delete"
	ToolEvidenceExport     = "readproof_evidence_export"
	ToolProbeCheck         = "readproof_probe_check"
	ToolReceiptsVerifyClms = "readproof_receipts_verify_claims"
)

// Token scopes of `readproof mcp --http` (mcpauth.ScopeRead and
// ScopeWrite), as the SDK's TokenInfo carries them.
const (
	ScopeRead  = "read"
	ScopeWrite = "write"
)

// WritesStore reports whether a tool needs a write-scoped token: it opens,
// fills or commits a run, moves a tag or records proof-of-read verdicts.
// Every other tool is open to read tokens; readproof_resolve (like
// resources/read) records no snapshot for them (resolveFor), and their
// calls' receipts are bounded (Options.ReadReceiptRate).
func WritesStore(tool string) bool {
	switch tool {
	case ToolRunStart, ToolRunMount, ToolRunCommit, ToolTagSet, ToolTagDelete, ToolProbeCheck:
		return true
	}
	return false
}

func (s *Server) addTools() {
	addTool(s, &mcp.Tool{Name: ToolResourcesList, Annotations: readOnly("List readproof resources"),
		Description: "List every document registered in readproof.toml: its readproof:// URI, source (credentials redacted), " +
			"freshness policy, current snapshot and tags. The discovery call; reads nothing from any source."}, s.resourcesList)
	addTool(s, &mcp.Tool{Name: ToolResolve, Annotations: reads("Read a document"),
		Description: "Read one document by readproof:// URI, exactly as `readproof get` does, and return its bytes with the snapshot id, " +
			"content hash, source revision and the decision (fetch, use_current, use_pinned, use_tag). " +
			"Side effect: under the resource's freshness policy this may read the source and record a new snapshot in the store. " +
			"URI@TAG returns the tagged snapshot without reading the source. A token of scope read records nothing: it is served what the store holds, " +
			"and refused where the policy would read the source (read URI@TAG instead). Inline content is capped at 1 MiB. " +
			"To record the read in a run, use readproof_run_mount instead."}, s.resolve)
	addTool(s, &mcp.Tool{Name: ToolHistory, Annotations: readOnly("Snapshot history"),
		Description: "List a resource's distinct snapshots, newest first, with the tags pointing at each."}, s.history)
	addTool(s, &mcp.Tool{Name: ToolRunStart, Annotations: writes("Start a run", false, false),
		Description: "Open a run: the container that records which documents one piece of work reads. " +
			"Then mount documents with readproof_run_mount and freeze the run with readproof_run_commit."}, s.runStart)
	addTool(s, &mcp.Tool{Name: ToolRunMount, Annotations: reads("Read a document into a run"),
		Description: "Read a document (readproof://NS/PATH or URI@TAG) and record it at the next position of an open run; returns the bytes " +
			"with their provenance. Side effect: like readproof_resolve it may read the source and record a new snapshot, and it " +
			"appends an entry to the run. Use exactly the returned bytes in your reasoning. Inline content is capped at 1 MiB."}, s.runMount)
	addTool(s, &mcp.Tool{Name: ToolRunCommit, Annotations: writes("Commit a run", false, false),
		Description: "Freeze an open run into an immutable manifest and return the manifest id (40 hex). Cite the manifest id in your answer: " +
			"readproof_manifest, readproof_diff, readproof_replay and readproof_evidence_export all take it."}, s.runCommit)
	addTool(s, &mcp.Tool{Name: ToolManifest, Annotations: readOnly("Show a manifest"),
		Description: "Show a committed manifest by run id or manifest id: every entry's URI, tag, snapshot, content hash, source revision, " +
			"observation time and decision. Entries come in pages: entry_offset and entry_limit select one, total_entries and " +
			"next_entry_offset say where to continue; a server may bound a page (a server over HTTP does, at 1,000 entries)."}, s.manifest)
	addTool(s, &mcp.Tool{Name: ToolDiff, Annotations: readOnly("Compare two runs"),
		Description: "Compare two runs (run ids or manifest ids): which documents were added, removed, changed or unchanged, why " +
			"(source revision, observation time, tag), and a unified diff of changed text (at most 1 MiB of diff in all). " +
			"Changes (one per entry of either run) come in pages: entry_offset and entry_limit select one, total_entries and next_entry_offset " +
			"say where to continue; counts are the whole runs'; a server may bound a page (a server over HTTP does, at 1,000 changes)."}, s.diff)
	addTool(s, &mcp.Tool{Name: ToolReplay, Annotations: readOnly("Replay a run"),
		Description: "Rebuild a run's bytes from the store alone (never the live source) and re-hash every entry; all_match says whether " +
			"every entry reproduces. include_content returns the bytes: all of them by default (no 1 MiB cap), or a window with " +
			"position, offset and max_bytes for clients that limit result sizes; next_offset continues a window. A server may bound the " +
			"content of one answer (a server over HTTP does by default): a call over it is refused, naming the windows to ask for. " +
			"Entries come in pages (entry_offset, entry_limit; total_entries and next_entry_offset say where to continue, and a server over " +
			"HTTP lists at most 1,000 per answer); all_match and matched are the whole run's on every page."}, s.replay)
	addTool(s, &mcp.Tool{Name: ToolTagSet, Annotations: writes("Set a tag", false, false),
		Description: "Point a named tag at a snapshot of a resource (default: its current snapshot), so URI@TAG delivers exactly those bytes. " +
			"The move is recorded in the tag's history; setting the tag to what it already holds (a retry) changes nothing and returns that move."}, s.tagSet)
	addTool(s, &mcp.Tool{Name: ToolTagList, Annotations: readOnly("List tags"),
		Description: "List a resource's tags, each with the exact URI@TAG reference to read it by."}, s.tagList)
	addTool(s, &mcp.Tool{Name: ToolTagDelete, Annotations: writes("Delete a tag", true, false),
		Description: "Remove a tag. The snapshot stays, manifests that mounted it still replay, and the deletion is recorded in the tag's history."}, s.tagDelete)
	addTool(s, &mcp.Tool{Name: ToolEvidenceExport, Annotations: readOnly("Export evidence"),
		Description: "Build the evidence bundle (an in-toto statement with the Merkle root over the run's entries, replayed from the store) for a " +
			"run id or manifest id, exactly as `readproof evidence export` writes it (unsigned), and return its bytes as a string. " +
			"with_content embeds every delivered byte (no 1 MiB cap), within the server's bound on one answer's content, when it has one."}, s.evidenceExport)
	addTool(s, &mcp.Tool{Name: ToolReceiptsVerifyClms, Annotations: readOnly("Check cited receipts"),
		Description: "Check the tool receipt ids cited in a text (or a JSON list of ids) against the store: each is valid, fabricated, " +
			"tampered, from another session or under an unknown key; receipts of the session that were not cited are listed as omitted. " +
			"A server may bound the ids one call checks and the omitted it lists (a server over HTTP does, at 1,000 each; omitted_more counts the rest)."}, s.verifyClaims)
	addTool(s, &mcp.Tool{Name: ToolProbeCheck, Annotations: writes("Check proof of read", false, false),
		Description: "Check an answer for the proof-of-read sentinels delivered in a run's probed mounts (readproof_run_mount with probe), " +
			"as `readproof probe check` does: each probed entry gets a verdict (READ_VERIFIED, READ_STALE, HALLUCINATED, REPLAY_SUSPECT), " +
			"and the verdicts are recorded in the store."}, s.probeCheck)
}

// summaryItems is the most items a text summary names; structuredContent
// has them all.
const summaryItems = 10

// some joins the first summaryItems of items with sep and says how many
// more structuredContent holds: a text summary stays short however many
// resources, entries or changes there are.
func some(items []string, sep string) string {
	if len(items) <= summaryItems {
		return strings.Join(items, sep)
	}
	return strings.Join(items[:summaryItems], sep) + sep + fmt.Sprintf("… and %d more in structuredContent", len(items)-summaryItems)
}

func plural(n int) string  { return text.Plural(n, "", "s") }
func pluralY(n int) string { return text.Plural(n, "y", "ies") }
