//go:build linux

package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
)

// TestRemoteHugeObjectMemory (Linux: the peak memory of a process and its
// children is read from its rusage): a remote that holds one blob of 40 MiB of
// zeros (40 KiB on disk, reachable from a forged resource chain) is refused
// by pull and clone, as any forged record is, and neither command (with
// every git process it starts, on both sides of a path remote) holds the
// blob whole in memory on the way. Before, for a 200 MB blob: pull peaked
// at 200 MB (the source's pack-objects, which took no -c setting of ours)
// and a path clone at 539 MB (the copy inflated the loose object whole and
// deflated it again).
func TestRemoteHugeObjectMemory(t *testing.T) {
	t.Parallel()
	requireGit(t)
	dir, uris := project(t, 1, 64)
	mustRP(t, dir, "run", "--id", "r1", uris[0])
	src := filepath.Join(dir, ".readproof")
	pulled := filepath.Join(t.TempDir(), "pulled")
	mustRP(t, dir, "clone", src, pulled)

	const size = 40 << 20
	git := func(stdin *os.File, args ...string) string {
		cmd := exec.Command("git", append([]string{"--git-dir", src}, args...)...)
		cmd.Stdin = stdin
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("git %s: %v", strings.Join(args, " "), err)
		}
		return strings.TrimSpace(string(out))
	}
	zeros, err := os.Create(filepath.Join(t.TempDir(), "zeros"))
	if err != nil {
		t.Fatal(err)
	}
	if err := zeros.Truncate(size); err != nil {
		t.Fatal(err)
	}
	blob := git(zeros, "hash-object", "-w", "--stdin")
	zeros.Close()
	tree, err := exec.Command("sh", "-c", "printf '100644 blob "+blob+"\\tbig\\n' | git --git-dir "+src+" mktree").Output()
	if err != nil {
		t.Fatal(err)
	}
	commit := git(nil, "-c", "user.name=x", "-c", "user.email=x@example.com", "commit-tree", "-m", "evil", strings.TrimSpace(string(tree)))
	git(nil, "update-ref", "refs/heads/readproof/resources/bench/evil", commit)

	for _, tc := range []struct {
		name string
		args []string
	}{
		{"pull", []string{"--store", pulled, "pull"}},
		{"clone", []string{"clone", src, filepath.Join(t.TempDir(), "cloned")}},
	} {
		code, out, stderr := runPeakRSS(dir, tc.args)
		if code != 3 {
			t.Fatalf("%s exited %d, want 3 (the forged chain refused)\n%s%s", tc.name, code, out, stderr)
		}
		peak := peakOf(t, tc.name, stderr)
		t.Logf("%s: peak RSS %d MiB", tc.name, peak>>20)
		if peak > size*3/4 {
			t.Errorf("%s peaked at %d MiB with a %d MiB blob on the remote: the blob was held whole", tc.name, peak>>20, size>>20)
		}
	}
}

// runPeakRSS runs readproof with args in dir, with no store or config from
// the environment, under peakrss: a process of its own, since the peak a
// process reports includes the memory of the process it was forked from
// (this test binary, running other tests). It returns the exit code, the
// stdout and the stderr.
func runPeakRSS(dir string, args []string) (code int, stdout []byte, stderr string) {
	cmd := exec.Command("peakrss", append([]string{"readproof"}, args...)...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "READPROOF_STORE=", "READPROOF_CONFIG=")
	var errb strings.Builder
	cmd.Stderr = &errb
	out, _ := cmd.Output()
	return cmd.ProcessState.ExitCode(), out, errb.String()
}

// peakOf is the peak RSS in bytes that peakrss wrote to stderr, the command
// name's; the test fails when it wrote none.
func peakOf(t *testing.T, name, stderr string) int64 {
	t.Helper()
	_, last, _ := strings.Cut(stderr, "peakrss: ")
	kib, err := strconv.ParseInt(strings.TrimSpace(last), 10, 64)
	if err != nil {
		t.Fatalf("%s: no peak in %q", name, stderr)
	}
	return kib << 10
}

// peakRSSMain is the peakrss command of the tests: it runs its arguments as
// a command and, when it ends, writes "peakrss: N" to stderr, N the peak
// resident memory in KiB of the command and every process it waited for
// (ru_maxrss), and exits with the command's code.
func peakRSSMain() {
	cmd := exec.Command(os.Args[1], os.Args[2:]...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	_ = cmd.Run()
	if cmd.ProcessState == nil {
		fmt.Fprintln(os.Stderr, "peakrss: cannot start", os.Args[1])
		os.Exit(127)
	}
	fmt.Fprintf(os.Stderr, "peakrss: %d\n", cmd.ProcessState.SysUsage().(*syscall.Rusage).Maxrss)
	os.Exit(cmd.ProcessState.ExitCode())
}
