package share

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"

	"github.com/readproof/readproof/gitstore"
	"github.com/readproof/readproof/hint"
)

// Clone creates a store at dir from the repository at url (a path to a
// repository, file://, git://, ssh:// or http(s)://), with the remote
// "origin", and pulls everything from it, verifying every manifest. On any
// failure nothing is left at dir.
func Clone(ctx context.Context, url, dir string, opts Options) (res *PullResult, err error) {
	if gitstore.IsStore(dir) {
		return nil, hint.With(fmt.Errorf("clone into %s: %w", dir, gitstore.ErrExists), "pull into it instead: readproof --store "+dir+" pull")
	}
	_, statErr := os.Stat(dir)
	existed := statErr == nil
	if statErr != nil && !errors.Is(statErr, fs.ErrNotExist) {
		return nil, fmt.Errorf("clone into %s: %w", dir, statErr)
	}
	g, err := gitstore.Init(dir)
	if err != nil {
		return nil, fmt.Errorf("clone into %s: %w", dir, err)
	}
	defer func() {
		g.Close()
		if err != nil {
			os.RemoveAll(dir)
			if existed {
				os.Mkdir(dir, 0o777)
			}
		}
	}()
	t, err := opts.transport(g)
	if err != nil {
		return nil, err
	}
	if err := t.AddRemote(ctx, "origin", url, fetchRefspecs("origin")); err != nil {
		return nil, fmt.Errorf("clone %s: %w", gitstore.RedactURL(url), err)
	}
	if err := t.Fetch(ctx, "origin", fetchRefspecs("origin")); err != nil {
		return nil, hint.With(fmt.Errorf("clone %s: %w", gitstore.RedactURL(url), err), "check the URL and that git can reach it: git ls-remote "+gitstore.RedactURL(url))
	}
	return integrate(ctx, g, t, "origin", opts)
}
