// Package proofread owns proof of read on runs: where the offline probe key
// lives, mounting a document with a probe line appended, judging an agent's
// answer into a verdict record, and the proof-of-read lines that `manifest`
// and `replay` show (docs/PROBE_PROTOCOL.md §10).
//
// The CLI (internal/commands) and the MCP server (internal/mcpserver) both
// call these functions directly; neither holds any of this logic. The
// package prints nothing: it returns data, lines and errors with hints.
//
// It imports store, probe, manifest, policy and hint; it must not import
// commands, mcpserver or the CLI library.
package proofread
