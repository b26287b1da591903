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
// truncation marker, text-or-blob delivery, error results with hints, and
// tool receipts for every executed call when a receipts key is configured.
// stdout belongs to the protocol; the package writes diagnostics only to the
// logger it is given.
//
// It imports store, manifest, identity, hint, receipts and the MCP go-sdk.
// It must not import go-git or the commands package (which imports it);
// what lives in commands (probed mounts, probe checks, manifest and replay
// extras) comes in as hooks in Options.
package mcpserver
