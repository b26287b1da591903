package gitstore

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// FetchObjects fetches from remote everything reachable from the given
// object ids (ref tips the remote advertised, from LsRemote) and writes no
// ref at all: not the tips, not the remote's tracking refs, not FETCH_HEAD.
// Like Fetch it checks incoming objects (fetch.fsckObjects), bounds what
// arrives (MaxFetchBytes), and git checks
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
	args := []string{"-c", "fetch.fsckObjects=true", "-c", bigObjects, "-c", fetchUnpackLimit, "-c", transferUnpackLimit, "fetch", "--refmap=", "--no-tags", "--no-write-fetch-head", "--no-auto-gc", "--stdin"}
	run, heads, watch := t, true, t.dir
	if !t.opts.HookObjects {
		// git fetch reads every ref of the repository twice whatever it
		// fetches: it parses the object of each to mark what is complete
		// locally, and its connectivity check walks `--not --all`. A store
		// has two refs per run (its run tag and the tracking ref), so at
		// 10^5 runs that was 4.6 s of git's CPU in a pull of 100 runs. The
		// fetch runs in a ref view instead: the store's objects with only
		// its branches as refs (the journal reaches every recorded
		// manifest). The check is not weaker: the walk stops at fewer
		// refs, so it reads more, never less.
		view, n, cleanup, err := t.fetchView()
		if err != nil {
			return fmt.Errorf("fetch from %s: %w", RedactURL(remote), err)
		}
		defer cleanup()
		// git writes what arrives into an object directory of the view's
		// own, reading the store's beside it (fetchIncoming): the fetch
		// bound measures, and a refused fetch removes, this fetch's files
		// alone, not those of another pull or a `git repack` of the store
		if err := view.fetchIncoming(); err != nil {
			return fmt.Errorf("fetch from %s: %w", RedactURL(remote), err)
		}
		run, heads, watch = view, n > 0, view.dir
		// git reads an alternate's refs as its own: `git for-each-ref`
		// of every ref of the store, once to negotiate and once to check
		// what arrived is connected (--alternate-refs), which the view
		// exists to spare; the view's branches are the store's
		args = append([]string{"-c", "core.alternateRefsCommand=true"}, args...)
	}
	if heads {
		// with no branch (a clone's empty store) git offers nothing either
		// way, and warns on the progress the user sees that the tip
		// "does not match any refs"
		args = append(args, "--negotiation-tip=refs/heads/*")
	}
	args = append(args, t.localUploadPack(ctx, remote)...)
	args = append(args, t.progressFlag())
	args = append(args, "--", remote)
	err := boundedFetch(ctx, watch, t.shownRemote(remote), t.maxFetch(), func(ctx context.Context) error {
		_, err := run.runInput(ctx, true, strings.NewReader(in.String()), args...)
		return err
	})
	if err == nil && run.alternates != "" {
		// what arrived goes into the store before the caller writes any
		// ref naming it; a refused fetch leaves it in the view, removed
		// whole with it
		err = adoptIncoming(run.objects, run.alternates)
	}
	if err != nil {
		return fmt.Errorf("fetch from %s: %w", RedactURL(remote), err)
	}
	return nil
}

// fetchViewPrefix names the scratch directories of fetchView, made inside
// the store's git directory.
const fetchViewPrefix = "readproof-fetch-"

// probePrefix names the scratch repositories of ProbeCommitAt, made
// inside the store's git directory like the fetch views.
const probePrefix = "readproof-probe-"

// isScratch reports whether name, an entry at the top of a store, is a
// scratch directory of a fetch view or a probe.
func isScratch(name string) bool {
	return strings.HasPrefix(name, fetchViewPrefix) || strings.HasPrefix(name, probePrefix)
}

// makeScratch makes a private scratch directory prefix* inside the git
// directory gitDir, not in $TMPDIR: a process killed while it exists
// leaves it where the next write's sweep (sweepStale) finds it, and the
// flock held on it (holdScratch) until cleanup says whether its owner lives.
func makeScratch(gitDir, prefix string) (dir string, cleanup func(), err error) {
	dir, err = os.MkdirTemp(gitDir, prefix)
	if err != nil {
		return "", nil, err
	}
	release, err := holdScratch(dir)
	if err != nil {
		os.RemoveAll(dir)
		return "", nil, err
	}
	return dir, func() {
		os.RemoveAll(dir)
		release()
	}, nil
}

// sweepScratch removes the scratch directory (fetch view or probe) at path, last modified at mod,
// when the process that made it is gone (a pull killed while fetching):
// nobody holds its flock. It reports whether it removed it.
func sweepScratch(path string, mod time.Time) bool {
	release, ok := scratchAbandoned(path, mod)
	if !ok {
		return false
	}
	defer release()
	return os.RemoveAll(path) == nil
}

// fetchView lays out a scratch git directory that is the store seen with
// its branches (refs/heads/) as its only refs: HEAD, refs/, a packed-refs
// of the branches, and a config that includes the store's own (remotes,
// URL rules, fsck settings). Git is given the store's object directory
// (GIT_OBJECT_DIRECTORY; FetchObjects makes it the alternate of an object
// directory of the view's own, fetchIncoming, whose packs it then moves
// into the store); no ref is written there.
// The directory is readproof-fetch-* inside the store, flocked while in
// use; one a killed process left is removed by the next write's sweep.
// It also returns how many branches the view holds.
func (t *Transport) fetchView() (*Transport, int, func(), error) {
	dir, err := filepath.Abs(t.dir)
	if err != nil {
		return nil, 0, nil, err
	}
	// the store's branches, as Refs lists them (loose over packed, sorted);
	// only the path is needed to read refs
	heads, err := (&repo{path: dir}).Refs("refs/heads/")
	if err != nil {
		return nil, 0, nil, err
	}
	tmp, cleanup, err := makeScratch(dir, fetchViewPrefix)
	if err != nil {
		return nil, 0, nil, err
	}
	var packed strings.Builder
	packed.WriteString("# pack-refs with: sorted \n")
	for _, r := range heads {
		packed.WriteString(string(r.OID) + " " + r.Name + "\n")
	}
	// The format version is the store's (readproof writes version 0),
	// which git reads from this file, not through the include.
	var config strings.Builder
	config.WriteString("[core]\n\trepositoryformatversion = 0\n\tbare = true\n[include]\n")
	writeConfigPair(&config, "path", filepath.Join(dir, "config"))
	err = os.Mkdir(filepath.Join(tmp, "refs"), 0o700)
	if err == nil {
		err = os.WriteFile(filepath.Join(tmp, "HEAD"), []byte("ref: refs/heads/main\n"), 0o600)
	}
	if err == nil {
		err = os.WriteFile(filepath.Join(tmp, "packed-refs"), []byte(packed.String()), 0o600)
	}
	if err == nil {
		err = os.WriteFile(filepath.Join(tmp, "config"), []byte(config.String()), 0o600)
	}
	if err != nil {
		cleanup()
		return nil, 0, nil, err
	}
	return &Transport{dir: tmp, git: t.git, opts: t.opts, objects: filepath.Join(dir, "objects"), urlsFrom: t}, len(heads), cleanup, nil
}
