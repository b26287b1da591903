package evidence

import "errors"

// Sentinel errors. Every error this package returns wraps one of these, so
// callers match with errors.Is.
var (
	// ErrInvalidInput: Build was handed values that cannot form a bundle.
	ErrInvalidInput = errors.New("invalid evidence input")
	// ErrDigestMismatch: bytes do not hash to the digest recorded for them.
	ErrDigestMismatch = errors.New("digest mismatch")
	// ErrVerification: a bundle failed at least one verification check.
	ErrVerification = errors.New("evidence verification failed")
	// ErrNoStore: the store check was requested without a Replayer.
	ErrNoStore = errors.New("no store to replay against")
	// ErrEnvelope: a DSSE envelope is malformed.
	ErrEnvelope = errors.New("malformed DSSE envelope")
	// ErrBadSignature: a signature does not verify.
	ErrBadSignature = errors.New("signature does not verify")
	// ErrUntrustedKey: a signature verifies, or would, but its key is not
	// trusted (not in the trusted keys or the allowed signers).
	ErrUntrustedKey = errors.New("signing key is not trusted")
	// ErrKeyNotValid: an allowed signer's key exists but is outside its
	// valid-after/valid-before window or namespaces at the time checked.
	ErrKeyNotValid = errors.New("signing key not valid for this signature")
	// ErrNotSigned: a commit carries no signature.
	ErrNotSigned = errors.New("not signed")
	// ErrAllowedSigners: an allowed_signers file cannot be parsed.
	ErrAllowedSigners = errors.New("invalid allowed_signers")
	// ErrKeyExists: CreateKey would overwrite a file.
	ErrKeyExists = errors.New("key file already exists")
	// ErrKeyLocation: a key path lies inside a forbidden directory.
	ErrKeyLocation = errors.New("key path inside a repository")
	// ErrKeyPermissions: a private key file is readable by others.
	ErrKeyPermissions = errors.New("private key file permissions too open")
	// ErrEncryptedKey: a private key is protected by a passphrase.
	ErrEncryptedKey = errors.New("private key is encrypted")
	// ErrUnsupportedKey: a key is not ed25519 (or not a key at all).
	ErrUnsupportedKey = errors.New("unsupported key")
)
