package share

import (
	"errors"

	"github.com/readproof/readproof/gitstore"
)

// Errors matched with errors.Is by callers.
var (
	// ErrUnverified: a pull or clone brought data that does not verify
	// (a manifest entry whose blob is missing or does not hash to what the
	// manifest records). Nothing was adopted.
	ErrUnverified = errors.New("remote data does not verify")
	// ErrRejected: the remote refused a push (it moved since the last
	// pull). Nothing changed on the remote.
	ErrRejected = gitstore.ErrRejected
	// ErrNoRemote: the remote name is not configured.
	ErrNoRemote = gitstore.ErrNoRemote
	// ErrRemoteExists: AddRemote with a name already configured.
	ErrRemoteExists = gitstore.ErrRemoteExists
	// ErrNoConflict: a resolve or rename names nothing in conflict.
	ErrNoConflict = errors.New("no such conflict")
	// ErrRunExists: a rename targets a run id that names another manifest.
	ErrRunExists = errors.New("run id already names another manifest")
	// ErrNotStore: the remote is not a readproof store (a project's
	// repository, say). Nothing was fetched from it or pushed to it.
	ErrNotStore = errors.New("not a readproof store")
	// ErrBusy: local writers kept moving refs while a pull integrated.
	ErrBusy = errors.New("store busy")
)
