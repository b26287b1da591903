package store

import (
	"context"

	"github.com/readproof/readproof/gitstore"
)

// GC packs the store's loose objects into delta-compressed packs and
// removes unreachable objects older than the grace period, with stock git
// (gitstore.GC). It is safe while other readproof processes write: see
// "Garbage collection" in docs/store-format.md.
func (s *Store) GC(ctx context.Context, opts gitstore.GCOptions) (*gitstore.GCResult, error) {
	return gitstore.GC(ctx, s.Path(), opts)
}
