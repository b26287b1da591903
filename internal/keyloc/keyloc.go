package keyloc

import (
	"errors"
	"os"

	"github.com/readproof/readproof/internal/policy"
)

// ErrConfig is wrapped by errors in how a key's place was given (an
// environment variable that cannot be used): a usage error.
var ErrConfig = errors.New("key location")

// Forbidden lists the directories a key file may not be in: the store, and
// the project directory when its readproof.toml exists. (Every git
// repository enclosing the key is refused by the key packages themselves.)
func Forbidden(storePath string, pol *policy.File) []string {
	dirs := []string{storePath}
	if pol != nil && pol.Path != "" && pol.Dir != "" {
		if _, err := os.Stat(pol.Path); err == nil {
			dirs = append(dirs, pol.Dir)
		}
	}
	return dirs
}
