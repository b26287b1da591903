package telemetry

import (
	"go.opentelemetry.io/otel/attribute"
)

// Attribute keys (docs/observability.md). Values are identities, counts,
// hashes, decisions and redacted source descriptions; never document bytes,
// header values, tokens or sentinels.
const (
	KeyCommand     = "readproof.command"      // the command path, on the root span
	KeyExitCode    = "process.exit.code"      // the command's exit code, on the root span
	KeyErrorType   = "error.type"             // the failure's class, on a failed span
	KeyURI         = "readproof.uri"          // readproof://NS/PATH, without the tag
	KeyTag         = "readproof.tag"          // the tag a document was read by
	KeySourceType  = "readproof.source.type"  // filesystem, http, github, git
	KeySource      = "readproof.source"       // the source, redacted (sourcespec.Spec.Redacted().Describe())
	KeyDecision    = "readproof.decision"     // fetch, use_current, use_pinned, use_tag
	KeyBytes       = "readproof.bytes"        // bytes delivered
	KeyNotModified = "readproof.not_modified" // the source answered "not modified"
	KeySnapshot    = "readproof.snapshot"     // the snapshot blob id
	KeyRunID       = "readproof.run_id"
	KeyPosition    = "readproof.position"
	KeyManifestID  = "readproof.manifest_id"
	KeyEntries     = "readproof.entries"     // entries in the manifest
	KeyMerkleRoot  = "readproof.merkle_root" // evidence Merkle root over the entries (hex)
	KeyRemote      = "readproof.remote"      // a remote's name (never its URL)
	KeyRefs        = "readproof.refs"        // refs a push created or moved
	KeyRuns        = "readproof.runs"        // runs a push sent or a pull adopted
	KeyUpToDate    = "readproof.up_to_date"  // push/pull had nothing to do
	KeyProblems    = "readproof.problems"    // problems (and warnings) verify found
	KeyOK          = "readproof.ok"          // verify found the store sound
	KeyVerifyMode  = "readproof.verify.mode" // structure, read-data, subset ...
	KeyReceiptID   = "readproof.receipt_id"
	KeyExecutable  = "process.executable.name" // base name of the program exec runs (no arguments)

	// GenAI and MCP semantic conventions, on MCP spans.
	KeyGenAIOperation  = "gen_ai.operation.name" // execute_tool
	KeyGenAIToolName   = "gen_ai.tool.name"
	KeyGenAIToolType   = "gen_ai.tool.type"      // function
	KeyGenAIDataSource = "gen_ai.data_source.id" // the resource URI a call reads
	KeyMCPMethod       = "mcp.method.name"       // tools/call, resources/read
	KeyMCPResourceURI  = "mcp.resource.uri"
)

// Committed returns the attributes of a committed manifest.
func Committed(manifestID string, entries int, merkleRoot string) []attribute.KeyValue {
	return []attribute.KeyValue{
		attribute.String(KeyManifestID, manifestID),
		attribute.Int(KeyEntries, entries),
		attribute.String(KeyMerkleRoot, merkleRoot),
	}
}
