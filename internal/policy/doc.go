// Package policy reads and writes readproof.toml, the policy file that
// declares which documents agents may read (each [[resource]] with its
// readproof:// identity, its source and its freshness rule), the defaults
// those resources inherit, and the limits every source works within: the
// filesystem roots, the environment variables ${NAME} may name, the network
// allow-lists, timeouts and size limits, and the paths of the signing, probe
// and receipt keys.
//
// Decoding is strict. Every problem (malformed TOML, an unknown key, a wrong
// type, a bad duration, size, URI or CIDR, a source missing a key its type
// needs) is reported as an *Error naming the file, the line and the key path
// (resource[2].source.path counts [[resource]] blocks from 1), with a
// separate hint such as a did-you-mean. The package never expands ${NAME}
// references and never reads the environment: it only checks names against
// [sources].env. AppendResource adds a resource as text, leaving existing
// content and comments untouched, and replaces the file atomically.
//
// Parse reads a file in one pass (fastRead, fastDecode) when it keeps to
// the TOML policy files are written in and is accepted; other TOML and every
// file with a problem are read by BurntSushi/toml and a position scanner,
// which word the errors. FuzzParseMatchesTOML holds the two to each other.
// The fast path decodes each [[resource]] block as the next begins and
// reuses the memory of its tree for the next, and finds duplicate URIs
// from the index it builds for Lookup.
// A parsed File answers Lookup from an index; Lazy defers reading the file
// to the first command that needs it. LoadCached keeps the resources of a
// large file in a cache file the caller names, or one for each policy file
// in a directory it names (the CLI's store, a bounded number of caches),
// used only for the file's very bytes (its SHA-256, or the stat of a file
// that has settled) and the same build, with the settings parsed again at
// every load, its resources decoded when asked for (Lookup one, Resources
// all), and only when it is sealed
// (HMAC-SHA256) under the key the caller supplies (the CLI's is the user's,
// outside the store); FuzzCacheMatchesParse holds it to Load, FuzzCacheFile
// holds whatever the cache file holds to the MAC.
//
// policy depends on identity and adapters/sourcespec (the types it hands to
// sources), on internal/fspath (Open judges what the policy file is from
// the file opened) and on BurntSushi/toml. It must not import adapters, gitstore,
// go-git, the store or the CLI (internal/layering's test enforces it), and it
// performs no network access.
package policy
