package commands

// Proof of read on runs: `run mount --probe`, and the verdict and
// delivered-hash lines of `manifest` and `replay` (docs/PROBE_PROTOCOL.md
// §10, docs/store-format.md "Proof-of-read verdicts").

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/readproof/readproof/internal/hint"
	"github.com/readproof/readproof/internal/policy"
	"github.com/readproof/readproof/internal/store"
	"github.com/readproof/readproof/internal/text"
	"github.com/readproof/readproof/manifest"
	"github.com/readproof/readproof/probe"
)

func init() {
	mountFlags = append(mountFlags,
		&cli.BoolFlag{Name: "probe", Usage: "append a proof-of-read probe line to each document (needs a key: readproof probe key init)"},
		&cli.StringFlag{Name: "probe-key", Usage: "the probe key file (default: [probe] key in readproof.toml, else $XDG_CONFIG_HOME/readproof/probe.key)"},
	)
	plain := mountOne
	mountOne = func(c *cli.Context, e *env, s *store.Store, id, ref string) (*store.Delivery, []byte, error) {
		if !c.Bool("probe") {
			return plain(c, e, s, id, ref)
		}
		return mountProbed(c, e, s, id, ref)
	}
	manifestExtras = append(manifestExtras, manifestVerdicts)
	replayExtras = append(replayExtras, replayProbes)
}

// probeKeyPath picks the key file: the flag, then [probe] key, then the
// default location.
func probeKeyPath(flag string, pol *policy.File) (string, error) {
	if flag != "" {
		return filepath.Abs(flag)
	}
	if pol != nil && pol.ProbeKey != "" {
		return pol.ProbeKey, nil
	}
	p, err := probe.DefaultKeyPath()
	if err != nil {
		return "", hint.With(err, "name the key file with --key or [probe] key in readproof.toml")
	}
	return p, nil
}

// probeForbidden lists the directories a key file may not be in: the store,
// and the project directory when a readproof.toml exists there.
func probeForbidden(storePath string, pol *policy.File) []string {
	dirs := []string{storePath}
	if pol != nil && pol.Path != "" {
		if _, err := os.Stat(pol.Path); err == nil {
			dirs = append(dirs, pol.Dir)
		}
	}
	return dirs
}

// loadProbeKeys loads the offline key for a store, with hints a user can act on.
func loadProbeKeys(flag string, s *store.Store) (probe.Keys, string, error) {
	path, err := probeKeyPath(flag, s.Policy())
	if err != nil {
		return probe.Keys{}, "", err
	}
	keys, err := probe.LoadKeys(path, probeForbidden(s.Path(), s.Policy())...)
	if err != nil {
		return probe.Keys{}, path, probeKeyHint(err, path)
	}
	return keys, path, nil
}

func probeKeyHint(err error, path string) error {
	switch {
	case errors.Is(err, probe.ErrKeyLocation):
		return hint.With(err, "keep the key outside the store, the project and every git repository: pass --key PATH or set [probe] key in readproof.toml")
	case errors.Is(err, probe.ErrKeyExists):
		return hint.With(err, "keep it, or replace it with `readproof probe key init --rotate`, which ends every outstanding sentinel")
	case errors.Is(err, os.ErrNotExist) || (errors.Is(err, probe.ErrKeyFile) && !fileExists(path)):
		return hint.With(err, "create the key first: readproof probe key init")
	}
	return err
}

func fileExists(p string) bool {
	_, err := os.Lstat(p)
	return err == nil
}

func sha256Hex(b []byte) string {
	sum := sha256.Sum256(b)
	return "sha256:" + hex.EncodeToString(sum[:])
}

// mountProbed records one delivery with a probe line appended. The session
// depends on the position, which only the store's publish step knows, so
// the probe record is computed there (and again if a concurrent mount takes
// the position first); the bytes returned are those of the last attempt,
// which are the ones recorded.
func mountProbed(c *cli.Context, e *env, s *store.Store, id, ref string) (*store.Delivery, []byte, error) {
	keys, _, err := loadProbeKeys(c.String("probe-key"), s)
	if err != nil {
		return nil, nil, err
	}
	var delivered []byte
	var session string
	d, err := s.MountWithPosition(c.Context, id, ref, func(d *store.Delivery) error {
		sess, err := probe.EntrySession(id, d.Position)
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
		d.Probe = &manifest.Probe{Bucket: iss.Bucket, Length: iss.Length, DeliveredHash: sha256Hex(out), DeliveredSize: int64(len(out))}
		return nil
	})
	if err != nil {
		return nil, nil, err
	}
	e.say("readproof: probe line appended for session %s (bucket %d); delivered %s, %d bytes", session, d.Probe.Bucket, manifest.Short(d.Probe.DeliveredHash), d.Probe.DeliveredSize)
	shown := *d
	shown.Content = delivered
	return &shown, delivered, nil
}

// verdictsJSON is the JSON shape of a verdict record.
type verdictsJSON struct {
	Commit string `json:"verdict_commit"`
	*store.VerdictRecord
}

func verdictLine(v store.VerdictEntry, r *store.VerdictRecord) string {
	l := fmt.Sprintf("proof of read: [%d] %s %s checked %s (check %d)", v.Position, v.URI, v.Verdict, r.CheckedAt.UTC().Format(time.RFC3339), r.Check)
	if v.Adjudicated && v.AdjudicatedVerdict != "" && v.AdjudicatedAt != nil && !v.AdjudicatedAt.Equal(r.CheckedAt) {
		l += fmt.Sprintf("; first adjudicated %s at %s", v.AdjudicatedVerdict, v.AdjudicatedAt.UTC().Format(time.RFC3339))
	}
	return l
}

// probeLines gives the proof-of-read lines of a manifest: the latest
// verdict of each probed entry, or "not checked".
func probeLines(s *store.Store, m *manifest.Manifest) (*store.VerdictRecord, []string, error) {
	probed := 0
	for _, en := range m.Entries {
		if en.Probe != nil {
			probed++
		}
	}
	if probed == 0 {
		return nil, nil, nil
	}
	rec, err := s.Verdicts(m.RunID)
	if err != nil {
		return nil, nil, err
	}
	if rec != nil && rec.ManifestID != m.ID {
		rec = nil
	}
	var lines []string
	for _, en := range m.Entries {
		if en.Probe == nil {
			continue
		}
		if v := rec.Entry(en.Position); v != nil {
			lines = append(lines, verdictLine(*v, rec))
			continue
		}
		lines = append(lines, fmt.Sprintf("proof of read: [%d] %s probed, not checked (readproof probe check %s --answer FILE)", en.Position, en.URI, m.RunID))
	}
	return rec, lines, nil
}

func manifestVerdicts(s *store.Store, m *manifest.Manifest) (string, any, []string, error) {
	rec, lines, err := probeLines(s, m)
	if err != nil || lines == nil {
		return "", nil, nil, err
	}
	if rec == nil {
		return "proof_of_read", map[string]any{"checked": false}, append([]string{""}, lines...), nil
	}
	return "proof_of_read", verdictsJSON{Commit: rec.ID, VerdictRecord: rec}, append([]string{""}, lines...), nil
}

// replayProbes re-derives the delivered bytes of every probed entry with the
// key and compares their hash with the manifest's record.
func replayProbes(s *store.Store, res *store.ReplayResult) ([]string, error) {
	m := res.Manifest
	var probed []manifest.Entry
	for _, en := range m.Entries {
		if en.Probe != nil {
			probed = append(probed, en)
		}
	}
	if len(probed) == 0 {
		return nil, nil
	}
	keys, path, kerr := loadProbeKeys("", s)
	var lines []string
	bad := 0
	for _, en := range probed {
		var content []byte
		for _, r := range res.Entries {
			if r.Position == en.Position && r.Match {
				content = r.Content
			}
		}
		switch {
		case content == nil:
			lines = append(lines, fmt.Sprintf("proof of read: [%d] %s delivered hash not re-checked: the snapshot did not reproduce", en.Position, en.URI))
			continue
		case kerr != nil:
			lines = append(lines, fmt.Sprintf("proof of read: [%d] %s delivered hash %s could not be re-checked: no usable probe key at %s", en.Position, en.URI, manifest.Short(en.Probe.DeliveredHash), path))
			continue
		}
		sess, err := probe.EntrySession(m.RunID, en.Position)
		if err != nil {
			return lines, err
		}
		out, err := keys.Deliver(content, probe.Issued{Session: sess, Bucket: en.Probe.Bucket, Length: en.Probe.Length})
		if err != nil {
			lines = append(lines, fmt.Sprintf("proof of read: [%d] %s delivered hash mismatch: the probe record is invalid: %v", en.Position, en.URI, err))
			bad++
			continue
		}
		if got := sha256Hex(out); got != en.Probe.DeliveredHash || int64(len(out)) != en.Probe.DeliveredSize {
			lines = append(lines, fmt.Sprintf("proof of read: [%d] %s delivered hash mismatch: the key gives %s (%d bytes), the manifest records %s (%d bytes)",
				en.Position, en.URI, manifest.Short(got), len(out), manifest.Short(en.Probe.DeliveredHash), en.Probe.DeliveredSize))
			bad++
			continue
		}
		lines = append(lines, fmt.Sprintf("proof of read: [%d] %s delivered bytes verified (%s, %d bytes)", en.Position, en.URI, manifest.Short(en.Probe.DeliveredHash), en.Probe.DeliveredSize))
	}
	_, vl, err := probeLines(s, m)
	if err != nil {
		return lines, err
	}
	lines = append(lines, vl...)
	if bad > 0 {
		return lines, hint.With(fmt.Errorf("manifest %s: %d probed entr%s: delivered bytes do not match the recorded hash: %w", m.ID, bad, plural(bad, "y", "ies"), store.ErrMismatch),
			"the probe key was rotated since the run, or the record was altered; with the original key the hash must match")
	}
	return lines, nil
}

func plural(n int, one, many string) string { return text.Plural(n, one, many) }
