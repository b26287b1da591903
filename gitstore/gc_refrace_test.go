package gitstore

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/readproof/readproof/internal/hint"
	"github.com/readproof/readproof/internal/testsize"
)

// fakeGitRace puts a `git` first on PATH that plays a git gc losing the
// deleted-ref race its first `fails` times (every time when fails < 0):
// it deletes the loose ref victim (when deleteIt), as a concurrent writer does between
// git's listing of refs/heads/x/ and its read of the file, prints what
// git prints then (msg, with the ref, then "failed to run <step>") on
// stderr and as trace2 error events when GIT_TRACE2_EVENT is set, and
// exits 128. Every other command, and gc once the failures are used up,
// is the real git. It returns a function counting the gc runs.
//
// The race itself needs git paused between its stat and its read of one
// ref (it was reproduced with strace -e inject=newfstatat:delay_enter: see
// docs/store-format.md, "Garbage collection"); this plays its outcome, on
// a store whose refs and objects are real.
func fakeGitRace(t *testing.T, victim string, deleteIt bool, msg, step string, fails int) (gcRuns func() int) {
	t.Helper()
	real, err := findGit()
	if err != nil {
		t.Skip("git is not installed")
	}
	dir := t.TempDir()
	count := filepath.Join(dir, "gc-runs")
	script := `#!/bin/sh
gitdir=$1
case " $* " in
*" gc "*)
	n=$(cat '` + count + `' 2>/dev/null || echo 0); n=$((n+1)); echo $n > '` + count + `'
	if [ ` + strconv.Itoa(fails) + ` -lt 0 ] || [ $n -le ` + strconv.Itoa(fails) + ` ]; then
		[ ` + strconv.FormatBool(deleteIt) + ` = true ] && '` + real + `' "$gitdir" update-ref -d '` + victim + `'
		echo "fatal: ` + msg + victim + `" >&2
		echo "fatal: failed to run ` + step + `" >&2
		if [ -n "$GIT_TRACE2_EVENT" ]; then
			t2() { echo "$1" >> "$GIT_TRACE2_EVENT"; }
			t2 '{"event":"start","sid":"g","argv":["git","gc"]}'
			t2 '{"event":"error","sid":"g/p","msg":"cannot lock ref '"'refs/heads/z'"': lived on","fmt":"%s"}'
			t2 '{"event":"exit","sid":"g/p","code":0}'
			t2 '{"event":"error","sid":"g/s","msg":"` + msg + victim + `","fmt":"` + msg + `%s"}'
			t2 '{"event":"exit","sid":"g/s","code":128}'
			t2 '{"event":"error","sid":"g","msg":"failed to run ` + step + `","fmt":"failed to run %s"}'
			t2 '{"event":"exit","sid":"g","code":128}' 
		fi
		exit 128
	fi;;
esac
exec '` + real + `' "$@"
`
	if err := os.WriteFile(filepath.Join(dir, "git"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", dir+string(os.PathListSeparator)+os.Getenv("PATH"))
	return func() int {
		b, _ := os.ReadFile(count)
		n, _ := strconv.Atoi(strings.TrimSpace(string(b)))
		return n
	}
}

// TestGCSurvivesDeletedRefRace: a git gc that dies because a ref was
// deleted while git walked the refs ("unable to parse object: <ref>" from
// prune, "bad object <ref>" from pack-objects) is run again, with its
// messages read from stderr or, when GC shows git's progress, from git's
// trace2 events; the retry's gc completes (the old garbage goes, what is
// reachable stays). A ref still broken is not retried, and a race that
// keeps failing stops after gcAttempts.
func TestGCSurvivesDeletedRefRace(t *testing.T) {
	if _, err := lookGit(); err != nil {
		t.Skip("git is not installed")
	}
	const victim = "refs/heads/x/victim"
	for _, tc := range []struct {
		name, msg, step string
		fails, runs     int
		progress        bool
		broken          bool // the ref git names is still there, on a missing object
		wantErr         string
		wantHint        string // in the hint of the error GC returns
	}{
		{name: "prune", msg: "unable to parse object: ", step: "prune", fails: 1, runs: 2},
		{name: "pack-objects", msg: "bad object ", step: "repack", fails: 2, runs: 3},
		{name: "progress", msg: "unable to parse object: ", step: "prune", fails: 1, runs: 2, progress: true},
		{name: "still-broken", msg: "unable to parse object: ", step: "prune", fails: 1, runs: 1, broken: true,
			wantErr:  "unable to parse object: " + victim + "; fatal: failed to run prune: ref " + victim + " names a missing object: run readproof verify",
			wantHint: "nothing was removed: restore the object " + victim + " names from a clone (readproof pull) or a backup, or delete the ref"},
		{name: "every-time", msg: "bad object ", step: "repack", fails: -1, runs: gcAttempts, wantErr: "bad object " + victim + "; fatal: failed to run repack: refs were deleted under git gc 3 times in a row: run readproof gc again"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := NewTestStore(t)
			tip := mkCommit(t, s, "reachable")
			if err := s.Update(RefUpdate{Name: "refs/heads/main", New: tip}); err != nil {
				t.Fatal(err)
			}
			if err := s.Update(RefUpdate{Name: victim, New: tip}); err != nil {
				t.Fatal(err)
			}
			garbage := putBlob(t, s, "old garbage\n")
			if err := s.Sync(); err != nil {
				t.Fatal(err)
			}
			age(t, loosePath(s, garbage), 48*time.Hour)
			gcRuns := fakeGitRace(t, victim, !tc.broken, tc.msg, tc.step, tc.fails)
			if tc.broken {
				// The ref git named stays, on a missing object: damage.
				missing := strings.Repeat("7", 40)
				if err := os.WriteFile(filepath.Join(s.Path(), filepath.FromSlash(victim)), []byte(missing+"\n"), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			opts := GCOptions{Grace: time.Hour}
			var progress bytes.Buffer
			if tc.progress {
				opts.Progress = &progress
			}
			_, err := GC(context.Background(), s.Path(), opts)
			if n := gcRuns(); n != tc.runs {
				t.Errorf("git gc ran %d times, want %d", n, tc.runs)
			}
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("GC error %v, want one with %q", err, tc.wantErr)
				}
				// Session 17: the hint was gc's own "free space on (or
				// repair) the file system", which does not help here.
				if h := hint.Of(err); !strings.Contains(h, tc.wantHint) {
					t.Fatalf("GC error %v: hint %q, want one with %q", err, h, tc.wantHint)
				}
				return
			}
			if err != nil {
				t.Fatalf("GC failed on the deleted-ref race: %v", err)
			}
			if tc.progress && !strings.Contains(progress.String(), "running it again") {
				t.Errorf("progress does not say why gc ran again: %q", progress.String())
			}
			mustHave(t, s, tip, true, "reachable commit")
			mustHave(t, s, garbage, false, "old unreachable object (the retried gc pruned)")
			Fsck(t, s.Path())
		})
	}
}

// TestTrace2ErrorsReadsGit: the error events stock git writes to
// GIT_TRACE2_EVENT when it dies carry the message runGC reads.
func TestTrace2ErrorsReadsGit(t *testing.T) {
	t.Parallel()
	s := NewTestStore(t)
	log := filepath.Join(t.TempDir(), "trace2")
	cmd := GitCommand(t, s.Path(), "cat-file", "-t", "refs/heads/nope")
	cmd.Env = append(cmd.Env, "LC_ALL=C", "GIT_TRACE2_EVENT="+log)
	if err := cmd.Run(); err == nil {
		t.Fatal("git cat-file of a missing ref succeeded")
	}
	b, err := os.ReadFile(log)
	if err != nil {
		t.Fatal(err)
	}
	msgs := trace2Errors(b)
	if len(msgs) != 1 || !strings.Contains(msgs[0], "refs/heads/nope") || strings.HasPrefix(msgs[0], "fatal") {
		t.Fatalf("trace2 errors %q from %s", msgs, b)
	}
}

func TestRaceOnly(t *testing.T) {
	t.Parallel()
	gone := func(ref string) bool { return ref != "refs/heads/still-broken" }
	for _, tc := range []struct {
		msgs []string
		want bool
	}{
		{[]string{"unable to parse object: refs/heads/a", "failed to run prune"}, true},
		{[]string{"bad object refs/heads/readproof/open/r1", "failed to run repack"}, true},
		{[]string{"Duplicated ref, and SHA1s don't match: refs/heads/z/r1000", "failed to run repack"}, true},
		{[]string{"unable to parse object: refs/heads/still-broken", "failed to run prune"}, false},
		{[]string{"failed to run prune"}, false},
		{nil, false},
		{[]string{"unable to parse object: 0123456789abcdef0123456789abcdef01234567", "failed to run prune"}, false},
		{[]string{"unable to parse object: refs/heads/a", "bad tree object 0123", "failed to run prune"}, false},
		{[]string{"unable to parse object: HEAD"}, false},
		{[]string{"bad object refs/heads/a..b"}, false},
	} {
		if got := raceOnly(tc.msgs, gone); got != tc.want {
			t.Errorf("raceOnly(%q) = %v, want %v", tc.msgs, got, tc.want)
		}
	}
	got := fatalLines("git gc: fatal: unable to parse object: refs/heads/a; fatal: failed to run prune")
	if len(got) != 2 || got[0] != "unable to parse object: refs/heads/a" || got[1] != "failed to run prune" {
		t.Errorf("fatalLines: %q", got)
	}
}

// FuzzRefRace: a message names a ref only when it is one of git's two
// broken-ref messages followed by a valid ref name under refs/, exactly.
func FuzzRefRace(f *testing.F) {
	for _, s := range []string{"unable to parse object: refs/heads/a", "bad object refs/heads/readproof/aborted/r1/0123456789abcdef0123456789abcdef01234567",
		"bad object refs/", "unable to parse object: refs/heads/a.lock", "bad object HEAD", "unable to parse object: refs/heads/a b", "Duplicated ref, and SHA1s don't match: refs/heads/z/r1"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, msg string) {
		ref := refRace(msg)
		if ref == "" {
			return
		}
		if CheckRefName(ref) != nil || !strings.HasPrefix(ref, "refs/") ||
			(msg != "unable to parse object: "+ref && msg != "bad object "+ref && msg != "Duplicated ref, and SHA1s don't match: "+ref) {
			t.Fatalf("%q named ref %q", msg, ref)
		}
		trace2Errors([]byte(msg)) // must not panic on anything
	})
}

// TestGCWhileRefsComeAndGo (READPROOF_LONG_TESTS=1) races the real thing:
// a writer creates loose refs and deletes them in the order git lists
// their directory, while GC runs in a loop; every GC must succeed and the
// store stay clean. Before runGC retried, 1 GC in 10 to 20 failed here
// with "unable to parse object: refs/heads/z/…" or "bad object …".
func TestGCWhileRefsComeAndGo(t *testing.T) {
	if !testsize.Long() {
		t.Skip("races git gc for seconds; runs with " + testsize.Env + "=1")
	}
	if _, err := lookGit(); err != nil {
		t.Skip("git is not installed")
	}
	s := NewTestStore(t)
	tip := mkCommit(t, s, "reachable")
	if err := s.Update(RefUpdate{Name: "refs/heads/main", New: tip}); err != nil {
		t.Fatal(err)
	}
	const refs = 1200
	stop := make(chan struct{})
	done := make(chan error, 1)
	go func() {
		done <- func() error {
			dir := filepath.Join(s.Path(), "refs", "heads", "z")
			for cycle := 0; ; cycle++ {
				select {
				case <-stop:
					return nil
				default:
				}
				// A young loose object, so that prune walks the refs, and
				// the refs' value: a new one each cycle, since git
				// pack-refs --prune deletes a loose ref that has the value
				// it packed even if the ref was deleted and made again
				// meanwhile (why an open run never gets back an old value:
				// docs/store-format.md, "Aborted run").
				val, err := s.PutBlob([]byte("cycle " + strconv.Itoa(cycle)))
				if err != nil {
					return err
				}
				var batch []RefUpdate
				for i := 0; i < refs; i++ {
					batch = append(batch, RefUpdate{Name: "refs/heads/z/r" + strconv.Itoa(i), New: val})
					if len(batch) == packedMin-1 || i == refs-1 { // loose refs, as a run's are
						if err := s.Update(batch...); err != nil {
							return err
						}
						batch = batch[:0]
					}
				}
				f, err := os.Open(dir)
				if err != nil {
					return err
				}
				names, err := f.Readdirnames(-1) // git's order
				f.Close()
				if err != nil {
					return err
				}
				// The loose ones in git's order, then those a gc's
				// pack-refs moved into packed-refs.
				var del []RefUpdate
				listed := map[string]bool{}
				for _, n := range names {
					if !strings.HasSuffix(n, ".lock") {
						listed[n] = true
						del = append(del, RefUpdate{Name: "refs/heads/z/" + n, Old: val})
					}
				}
				for i := 0; i < refs; i++ {
					if n := "r" + strconv.Itoa(i); !listed[n] {
						del = append(del, RefUpdate{Name: "refs/heads/z/" + n, Old: val})
					}
				}
				if err := s.Update(del...); err != nil {
					return err
				}
			}
		}()
	}()
	deadline := time.Now().Add(20 * time.Second)
	gcs := 0
	// Every other gc with a progress writer: its messages come from
	// git's trace2 events, the others' from stderr.
	var progress bytes.Buffer
	for ; time.Now().Before(deadline); gcs++ {
		opts := GCOptions{Grace: time.Hour}
		if gcs%2 == 1 {
			opts.Progress = &progress
		}
		if _, err := GC(context.Background(), s.Path(), opts); err != nil {
			close(stop)
			<-done
			t.Fatalf("gc %d: %v", gcs+1, err)
		}
	}
	close(stop)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	t.Logf("%d gcs while %d refs at a time came and went; the ones with progress ran git gc again %d times",
		gcs, refs, strings.Count(progress.String(), "running it again"))
	Fsck(t, s.Path())
}
