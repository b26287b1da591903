// Package mcpserver serves readproof over the Model Context Protocol, so an
// agent host (Claude Code, Claude Desktop, Cursor) reads governed documents
// through readproof: declared resources as readproof:// resources, the
// readproof://{namespace}/{+path} template for uri@tag, and the readproof_*
// tools (resolve, runs, manifests, diff, replay, tags, evidence, receipts).
// Every handler is a thin layer over package store, the same API the CLI
// calls, so the two cannot drift; the server opens the store afresh for each
// request, so readproof.toml and the store are read live.
//
// It owns the MCP surface only: result shapes, the 1 MiB inline cap and its
// truncation marker, text-or-blob delivery, error results with hints,
// tool receipts for every executed call when a receipts key is configured,
// its own stdio transport (transport.go), which answers a line that is
// not a JSON-RPC message with a JSON-RPC error instead of ending the session,
// and the streamable HTTP front end (http.go): the SDK's handler, stateless,
// behind bearer tokens checked by internal/mcpauth, a per-token rate limit, a
// body limit and a concurrency limit, with a graceful shutdown. Over HTTP the
// token's name is the caller recorded in what a call writes, and a read-only
// token is refused on the tools that write (WritesStore). Over stdio,
// stdout belongs to the protocol; the package writes diagnostics only to the
// logger it is given.
//
// It calls the domain packages the CLI calls (store, proofread for probed
// mounts, probe checks and the proof-of-read parts of manifest and replay,
// receipts), with no hooks and no CLI types in between. It must not import
// go-git, the CLI library or the commands package (which imports it).
package mcpserver
