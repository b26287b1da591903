// Package gitstore is the only package that talks git. It stores blobs, trees
// and commits in a bare repository through go-git's filesystem storage, and
// moves refs with its own implementation of git's lock-file protocol
// (<ref>.lock, compare, write, fsync, rename), so stock git, go-git and several
// readproof processes can share one repository safely.
//
// Nothing outside this package imports go-git: callers see object ids as
// lower-case hex strings (OID) and a small set of operations: write and read
// objects, read refs, and update refs in one compare-and-swap transaction
// (Update). Init creates a store, Open opens any SHA-1 git repository, and
// testing.go offers NewTestStore, GitCommand and Fsck to other packages'
// tests (they take gitstore.TB, not testing.TB: the binary links no testing).
//
// Reading: a Store serializes its own reads (one mutex per open repository).
// ReadBlobs reads many blobs on several goroutines, each with an object
// reader of its own, and hands them to the caller in order, with Blob's
// bytes and errors; its options let a caller that checks the bytes with a
// hash of its own skip the SHA-1 against the id (ContentChecked, then
// VerifyBlob on a mismatch) and check loose objects' zlib checksums in the
// same pass (CheckLoose). BlobTo streams one blob into a writer (a hash,
// a file) a piece at a time, checked against its id on the way, for a
// blob whose size is not ours to bound: a snapshot a remote sent, a
// store's data under `verify --read-data`. A blob of up to 1 MiB whose
// delta chain holds no base over 16 MiB is read whole, as Blob reads it;
// any other goes through 64 KiB buffers and,
// for a delta, its base held up to 16 MiB (a larger base goes to a
// temporary file in objects/pack), never whole; max refuses a blob from
// its header before a byte of it is written.
//
// Durability: objects are written first; Update makes every object written
// through the Store durable before it publishes any ref, and makes the ref
// files and their directories durable after the rename (an fsync per file
// and directory; on Linux one syncfs per step once a batch holds more than a
// few files). A crash therefore never leaves a ref naming a missing or
// truncated object.
package gitstore
