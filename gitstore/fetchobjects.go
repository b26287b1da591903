package gitstore

import (
	"context"
	"fmt"
	"strings"
)

// FetchObjects fetches from remote everything reachable from the given
// object ids (ref tips the remote advertised, from LsRemote) and writes no
// ref at all: not the tips, not the remote's tracking refs, not FETCH_HEAD.
// Like Fetch it checks incoming objects (fetch.fsckObjects) and git checks
// that what arrived is connected before it returns. The ids go to git on
// stdin, so their number is not bounded by the command line. A tip the
// remote no longer has (it moved since it was listed) fails the fetch over
// protocol v0; protocol v2 serves any object the remote holds.
//
// The caller then writes the refs it decided on in one step (WriteNewRefs,
// or Update), instead of git writing one loose ref file per ref.
func (t *Transport) FetchObjects(ctx context.Context, remote string, oids []OID) error {
	if len(oids) == 0 {
		return nil
	}
	var in strings.Builder
	in.Grow(len(oids) * 41)
	seen := make(map[OID]bool, len(oids))
	for _, o := range oids {
		if !isHexOID(string(o)) {
			return fmt.Errorf("fetch from %s: bad object id %q", RedactURL(remote), truncate([]byte(o)))
		}
		if !seen[o] {
			seen[o] = true
			in.WriteString(string(o))
			in.WriteByte('\n')
		}
	}
	// --refmap= turns off git's update of the configured tracking refs for
	// the fetched tips; --stdin reads the ids as refspecs without a
	// destination.
	// The store's branches (the journal, which reaches every manifest, and
	// the chains) are the haves offered to the remote: offering every ref,
	// one run tag and one tracking ref per run, costs more than it saves.
	args := []string{"-c", "fetch.fsckObjects=true", "fetch", "--refmap=", "--no-tags", "--no-write-fetch-head", "--no-auto-gc", "--stdin",
		"--negotiation-tip=refs/heads/*"}
	args = append(args, t.progressFlag())
	args = append(args, "--", remote)
	if _, err := t.runInput(ctx, true, strings.NewReader(in.String()), args...); err != nil {
		return fmt.Errorf("fetch from %s: %w", RedactURL(remote), err)
	}
	return nil
}
