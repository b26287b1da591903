package proofread

import (
	"context"
	"crypto/sha256"
	"encoding/hex"

	"github.com/readproof/readproof/internal/store"
	"github.com/readproof/readproof/manifest"
	"github.com/readproof/readproof/probe"
)

// Mounted is one delivery recorded with a probe line: the delivery as the
// model sees it (Content holds the delivered bytes) and the probe session.
type Mounted struct {
	*store.Delivery
	Session string
}

// Mount records ref in the open run id with a probe line appended. The
// session depends on the position, which only the store's publish step
// knows, so the probe record is computed there (and again if a concurrent
// mount takes the position first); the bytes returned are those of the last
// attempt, which are the ones recorded.
func Mount(ctx context.Context, s *store.Store, keys probe.Keys, id, ref string) (*Mounted, error) {
	var delivered []byte
	var session string
	d, err := s.MountWithPosition(ctx, id, ref, func(d *store.Delivery) error {
		sess, err := probe.ContentSession(id, d.Position, SHA256(d.Content))
		if err != nil {
			return err
		}
		iss, _, err := keys.Issue(sess, s.Now(), 0)
		if err != nil {
			return err
		}
		out, err := keys.Deliver(d.Content, iss)
		if err != nil {
			return err
		}
		delivered, session = out, sess
		d.Probe = &manifest.Probe{Bucket: iss.Bucket, Length: iss.Length, DeliveredHash: SHA256(out), DeliveredSize: int64(len(out)),
			Session: manifest.ProbeSessionContent}
		return nil
	})
	if err != nil {
		return nil, err
	}
	shown := *d
	shown.Content = delivered
	return &Mounted{Delivery: &shown, Session: session}, nil
}

// SHA256 is the "sha256:HEX" digest of b, as manifests record it.
func SHA256(b []byte) string {
	sum := sha256.Sum256(b)
	return "sha256:" + hex.EncodeToString(sum[:])
}
