package storecheck_test

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/readproof/readproof/gitstore"
	"github.com/readproof/readproof/internal/policy"
	"github.com/readproof/readproof/internal/store"
	"github.com/readproof/readproof/internal/storecheck"
	"github.com/readproof/readproof/internal/testsize"
)

// TestGCWhileWriting runs readproof gc over and over while several
// processes commit runs (each run edits its process's document, so every
// run writes new blobs, trees and commits) and checks that nothing was
// lost: every run a writer reported is committed with the manifest it
// reported, replays, and the whole store verifies with --read-data.
func TestGCWhileWriting(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	const writers = 4
	docs := map[string]string{"shared.md": "shared document\n"}
	for w := 0; w < writers; w++ {
		docs[fmt.Sprintf("w%d.md", w)] = fmt.Sprintf("writer %d, version 0\n", w)
	}
	p := newProject(t, docs, "")
	p.run(t, "seed", uriOf("shared.md"))
	// The writers' automatic maintenance is off: packing the loose garbage
	// below into a new pack would restart its grace period (a pack's time is
	// its objects' age), so whether gc removes it would depend on which came
	// first. Maintenance alongside gc and writers is TestMaintenanceWhileWriting's.
	if out, err := gitstore.GitCommand(t, p.storePath(), "config", "gc.auto", "0").CombinedOutput(); err != nil {
		t.Fatalf("git config gc.auto 0: %v\n%s", err, out)
	}
	// Old unreachable garbage, which gc must remove meanwhile.
	garbage, err := p.s.Git().PutBlob([]byte("garbage from a crashed writer two days ago\n"))
	if err != nil {
		t.Fatal(err)
	}
	if err := p.s.Git().Sync(); err != nil {
		t.Fatal(err)
	}
	old := time.Now().Add(-48 * time.Hour)
	if err := os.Chtimes(p.looseObject(t, string(garbage)), old, old); err != nil {
		t.Fatal(err)
	}

	// The writers commit until the gcs are done, so their work (and the
	// replays and the check below) grows with the number of gcs: 3 by
	// default, 8 under READPROOF_LONG_TESTS=1. Each writer also stops at
	// maxRuns: where writes are much cheaper than a gc (a store on tmpfs,
	// where fsync costs nothing) the writers would otherwise commit
	// hundreds of runs per gc, and each gc, replay and check would grow with
	// them (50 s of CPU instead of 6).
	rounds := testsize.Pick(t, 3, 8)
	maxRuns := 4 * rounds
	stop := filepath.Join(p.dir, "stop")
	var cmds []*exec.Cmd
	var outs []*strings.Builder
	for w := 0; w < writers; w++ {
		cmd := exec.Command(os.Args[0], "-test.run=^TestGCWriterProcess$", "-test.v=false")
		cmd.Env = append(os.Environ(), "STORECHECK_WRITER="+fmt.Sprint(w), "STORECHECK_DIR="+p.dir, "STORECHECK_STOP="+stop, "STORECHECK_MAX="+fmt.Sprint(maxRuns))
		out := &strings.Builder{}
		cmd.Stdout, cmd.Stderr = out, out
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		cmds = append(cmds, cmd)
		outs = append(outs, out)
	}
	ctx := context.Background()
	gcs := 0
	deadline := time.Now().Add(20 * time.Second)
	for gcs < rounds && time.Now().Before(deadline) {
		if _, err := p.s.GC(ctx, gitstore.GCOptions{Grace: time.Hour}); err != nil {
			t.Errorf("gc %d: %v", gcs, err)
			break
		}
		gcs++
	}
	if err := os.WriteFile(stop, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	want := map[string]string{}
	for w, cmd := range cmds {
		if err := cmd.Wait(); err != nil {
			if d := os.Getenv("STORECHECK_KEEP"); d != "" {
				exec.Command("cp", "-a", p.dir, d).Run()
			}
			t.Fatalf("writer %d: %v\n%s", w, err, outs[w])
		}
		sc := bufio.NewScanner(strings.NewReader(outs[w].String()))
		for sc.Scan() {
			if f := strings.Fields(sc.Text()); len(f) == 3 && f[0] == "ok" {
				want[f[1]] = f[2]
			}
		}
	}
	if _, err := p.s.GC(ctx, gitstore.GCOptions{Grace: time.Hour}); err != nil {
		t.Fatal(err)
	}
	if gcs < 2 || len(want) < 2*writers {
		t.Fatalf("only %d gc runs overlapped %d committed runs: the test proves nothing", gcs, len(want))
	}
	t.Logf("%d gc runs while %d writers committed %d runs", gcs, writers, len(want))

	p.reopen(t, store.Options{})
	for run, m := range want {
		id, err := p.s.ManifestID(run)
		if err != nil || string(id) != m {
			t.Fatalf("run %s: manifest %s, %v; the writer committed %s", run, id, err, m)
		}
		if res, err := p.s.Replay(run); err != nil || !res.AllMatch {
			t.Fatalf("replay %s: %v", run, err)
		}
	}
	rep := p.check(t, storecheck.Options{ReadData: true})
	if !rep.OK() || len(rep.Problems) != 0 || rep.Counts.Runs != len(want)+1 {
		t.Fatalf("%s\n%s", rep.Summary(), problems(rep))
	}
	if err := gitstore.GitCommand(t, p.storePath(), "cat-file", "-e", string(garbage)).Run(); err == nil {
		t.Errorf("old unreachable blob %s survived gc", garbage)
	}
	gitstore.Fsck(t, p.storePath())
}

// TestGCWriterProcess is a writer for TestGCWhileWriting, run in its own
// process: it commits runs until the stop file exists (at least 3, at most
// STORECHECK_MAX, then it waits for the stop file), printing
// "ok RUN MANIFEST" for each.
func TestGCWriterProcess(t *testing.T) {
	w := os.Getenv("STORECHECK_WRITER")
	if w == "" {
		t.Skip("helper process for TestGCWhileWriting")
	}
	dir, stop := os.Getenv("STORECHECK_DIR"), os.Getenv("STORECHECK_STOP")
	maxRuns, err := strconv.Atoi(os.Getenv("STORECHECK_MAX"))
	if err != nil {
		t.Fatalf("STORECHECK_MAX: %v", err)
	}
	pol, err := policy.Load(filepath.Join(dir, "readproof.toml"))
	if err != nil {
		t.Fatal(err)
	}
	s, err := store.Open(filepath.Join(dir, ".readproof"), pol, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	doc := filepath.Join(dir, "w"+w+".md")
	ctx := context.Background()
	for i := 0; ; i++ {
		if _, err := os.Stat(stop); err == nil && i >= 3 {
			return
		}
		if i >= maxRuns {
			// done writing: wait for the stop file, without spinning
			for {
				if _, err := os.Stat(stop); err == nil {
					return
				}
				time.Sleep(20 * time.Millisecond)
			}
		}
		if err := os.WriteFile(doc, []byte(fmt.Sprintf("writer %s, version %d\n%s", w, i, strings.Repeat("text ", i%50))), 0o644); err != nil {
			t.Fatal(err)
		}
		run := fmt.Sprintf("w%s-%04d", w, i)
		var m string
		if i%2 == 0 {
			mf, _, err := s.RunOnce(ctx, run, []string{uriOf("w" + w + ".md"), uriOf("shared.md")})
			if err != nil {
				t.Fatal(err)
			}
			m = mf.ID
		} else {
			// an open run: its chain becomes unreachable when committed
			if err := s.StartRun(run); err != nil {
				t.Fatal(err)
			}
			for _, u := range []string{uriOf("w" + w + ".md"), uriOf("shared.md")} {
				if _, err := s.Mount(ctx, run, u); err != nil {
					t.Fatal(err)
				}
			}
			mf, err := s.CommitRun(run)
			if err != nil {
				t.Fatal(err)
			}
			m = mf.ID
		}
		fmt.Printf("ok %s %s\n", run, m)
	}
}
