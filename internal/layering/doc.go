// Package layering holds no code: its test checks, with `go list`, which
// packages each package of the module may import, and fails the day a
// forbidden import is added. docs/architecture.md explains the layers the
// rules encode:
//
//   - go-git is imported by gitstore only, and reached by no package except
//     through gitstore;
//   - the domain packages (identity, manifest, evidence, probe, receipts,
//     internal/policy) and the leaves (gitstore/gitobj, adapters/sourcespec,
//     internal/keyfile, internal/fspath, internal/text, internal/strictjson,
//     internal/hint) reach neither gitstore nor go-git, and import only the
//     module packages their allow-list names;
//   - internal/commands is imported by main only, internal/mcpserver by main
//     and commands only; urfave/cli stays in the CLI, the MCP SDK in the MCP
//     server and the CLI, BurntSushi/toml in internal/policy;
//   - no package reaches go-git's root package, plumbing/object,
//     transport/client or transport/file, nor ProtonMail's OpenPGP: they cost
//     every process start-up time (docs/startup.md).
package layering
