//go:build unix

package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/readproof/readproof/internal/testsize"
)

// TestSIGINTStopsDiffAndVerify (issue 15): Ctrl-C during a long `diff` of
// two runs of large documents, and during `verify` of a store of many
// resources, exits 130 within a second; diff prints nothing. As in
// TestSIGINTStopsLongReads, the signal goes once the progress line shows
// the command in its loop, under a pseudo-terminal.
func TestSIGINTStopsDiffAndVerify(t *testing.T) {
	requireGit(t)
	t.Parallel()
	t.Run("diff", func(t *testing.T) {
		t.Parallel()
		// small: 24 entries of 512 KiB; full: 39 of 8 MiB. Every 50th line
		// differs between the runs, so each entry's diff has many hunks:
		// about 50 ms an entry at the small size, so a diff that went on
		// after the signal would run more than a second and exit 0 (at
		// 1 MiB each entry takes some 180 ms, of which the two or three
		// diffed before the signal is seen are most of this test's CPU).
		size := testsize.Pick(t, 512<<10, 8<<20)
		docs, repeats := 3, 8
		if testsize.Long() {
			repeats = 13
		}
		dir := bigRun(t, docs, repeats, size)
		var args []string
		for i := 0; i < docs; i++ {
			name := filepath.Join(dir, "docs", fmt.Sprintf("d%04d.md", i))
			data, err := os.ReadFile(name)
			if err != nil {
				t.Fatal(err)
			}
			lines := bytes.SplitAfter(data, []byte("\n"))
			for j := 0; j < len(lines); j += 50 {
				lines[j] = []byte(fmt.Sprintf("changed %d line\n", j))
			}
			if err := os.WriteFile(name, bytes.Join(lines, nil), 0o644); err != nil {
				t.Fatal(err)
			}
			args = append(args, fmt.Sprintf("readproof://bench/docs/d%04d", i))
		}
		var all []string
		for r := 0; r < repeats; r++ {
			all = append(all, args...)
		}
		mustRP(t, dir, append([]string{"run", "--id", "big2"}, all...)...)
		sigint(t, dir, "diff: ", "diff.out", "diff", "big", "big2")
	})
	t.Run("verify", func(t *testing.T) {
		t.Parallel()
		n := testsize.Pick(t, 800, 6000)
		dir, uris := project(t, n, 64)
		mustRP(t, dir, append([]string{"run", "--id", "many"}, uris...)...)
		sigint(t, dir, "verify: ", "verify.out", "verify", "--read-data")
	})
}

// sigint starts readproof ARGS on a terminal, sends SIGINT when progress
// shows, and checks exit 130 within a second, the message, and that stdout
// (the file out) got nothing.
func sigint(t *testing.T, dir, progress, out string, args ...string) {
	t.Helper()
	f, err := os.Create(filepath.Join(dir, out))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	cmd, term := startOnPty(t, dir, f, progress, args...)
	select {
	case <-term.seen:
	case <-time.After(60 * time.Second):
		cmd.Process.Kill()
		cmd.Wait()
		t.Fatalf("no progress line %q within 60 s; the terminal shows %q", progress, term.String())
	}
	sent := time.Now()
	if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatalf("the command ended before the signal: %v", err)
	}
	err = cmd.Wait()
	took := time.Since(sent)
	<-term.done
	if code := exitCode(err); code != 130 {
		t.Fatalf("exit %d after SIGINT, want 130 (the store may be too small to still be working when the signal lands); terminal: %q", code, term.String())
	}
	// An interruption test: it ended because of the signal (exit 130,
	// "interrupted", below) while still working; the wall bound is wide,
	// for loaded machines.
	if took > 10*time.Second {
		t.Errorf("exited %v after SIGINT, want within 10 s", took)
	}
	t.Logf("%s: exit 130 %v after SIGINT", strings.Join(args, " "), took.Round(time.Millisecond))
	if !strings.Contains(term.String(), "interrupted") {
		t.Errorf("stderr does not say it was interrupted: %q", term.String())
	}
	if st, err := os.Stat(filepath.Join(dir, out)); err != nil || st.Size() != 0 {
		t.Errorf("%s wrote to stdout before stopping: %v", args[0], err)
	}
}
