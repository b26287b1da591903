package main

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
)

// readmeConsoleDir is the directory the README's console blocks show
// themselves in; the test runs each block in a new empty directory and
// reads this path as that directory.
const readmeConsoleDir = "/home/me/demo"

// consoleStep is one "$ command" of a console block and the output the
// README shows under it.
type consoleStep struct {
	cmd  string
	want []string
}

// parseConsole splits a console block into steps. A command continues on
// the next line while its line ends in a backslash; the lines up to the
// next "$ " are its output (blank lines are not compared).
func parseConsole(block string) []consoleStep {
	var steps []consoleStep
	cont := false
	for _, line := range strings.Split(strings.TrimRight(block, "\n"), "\n") {
		switch {
		case cont:
			steps[len(steps)-1].cmd += "\n" + line
		case strings.HasPrefix(line, "$ "):
			steps = append(steps, consoleStep{cmd: strings.TrimPrefix(line, "$ ")})
		case strings.TrimSpace(line) == "":
		case len(steps) > 0:
			steps[len(steps)-1].want = append(steps[len(steps)-1].want, line)
		}
		cont = len(steps) > 0 && strings.HasSuffix(line, `\`) && (cont || strings.HasPrefix(line, "$ "))
	}
	return steps
}

var (
	// a hex prefix cut with an ellipsis stands for any id of that shape
	shownHexPrefix = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`[0-9a-f]{4,}…`) })
	shownTime      = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ`) })
)

// shapeOf turns a line the README shows into a pattern for the line the
// command prints: ids cut short with "…" and RFC 3339 times match any id and
// any time; everything else must be as shown.
func shapeOf(shown string) *regexp.Regexp {
	var b strings.Builder
	b.WriteString("^")
	rest := shown
	for rest != "" {
		h := shownHexPrefix().FindStringIndex(rest)
		tm := shownTime().FindStringIndex(rest)
		switch {
		case h == nil && tm == nil:
			b.WriteString(regexp.QuoteMeta(rest))
			rest = ""
		case tm == nil || (h != nil && h[0] < tm[0]):
			b.WriteString(regexp.QuoteMeta(rest[:h[0]]) + `[0-9a-f]+…?`)
			rest = rest[h[1]:]
		default:
			b.WriteString(regexp.QuoteMeta(rest[:tm[0]]) + `\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ`)
			rest = rest[tm[1]:]
		}
	}
	b.WriteString("$")
	return regexp.MustCompile(b.String())
}

// TestREADMEConsoleBlocks runs every console block of the README as pasted,
// command by command in a new empty directory with readproof on PATH, and
// compares what each command prints with the lines the README shows under
// it, line for line and stream by stream: lines that start with
// "readproof:", and replay's verdict, on stderr, the rest on stdout, as the
// README says (issue 15: the walkthrough's first run failed as pasted).
func TestREADMEConsoleBlocks(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("needs git")
	}
	blocks := readmeBlocks(readREADME(t), "console")
	if len(blocks) == 0 {
		t.Fatal("README.md has no console block")
	}
	for i, block := range blocks {
		steps := parseConsole(block)
		if len(steps) == 0 {
			t.Errorf("console block %d has no $ command", i+1)
			continue
		}
		dir, err := filepath.EvalSymlinks(t.TempDir())
		if err != nil {
			t.Fatal(err)
		}
		home := t.TempDir()
		env := []string{"HOME=" + home, "XDG_CONFIG_HOME=" + filepath.Join(home, ".config"), "XDG_CACHE_HOME=" + filepath.Join(home, ".cache"),
			"GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=" + filepath.Join(home, ".gitconfig-none"), "PATH=" + os.Getenv("PATH"), "LANG=C.UTF-8"}
		for _, st := range steps {
			cmd := exec.Command("sh", "-c", st.cmd)
			cmd.Dir, cmd.Env = dir, env
			var stdout, stderr bytes.Buffer
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			if err := cmd.Run(); err != nil {
				t.Fatalf("console block %d: $ %s\n%v\n%s%s", i+1, st.cmd, err, stdout.String(), stderr.String())
			}
			var wantOut, wantErr []string
			for _, l := range st.want {
				if onStderr(l) {
					wantErr = append(wantErr, l)
				} else {
					wantOut = append(wantOut, l)
				}
			}
			compareShown(t, fmt.Sprintf("console block %d: $ %s: stdout", i+1, st.cmd), lines(stdout.String(), dir), wantOut)
			compareShown(t, fmt.Sprintf("console block %d: $ %s: stderr", i+1, st.cmd), lines(stderr.String(), dir), wantErr)
		}
	}
}

// onStderr tells which lines the README says go to stderr: readproof's
// notes, errors and hints, and replay's verdict.
func onStderr(shown string) bool {
	return strings.HasPrefix(shown, "readproof:") || strings.HasPrefix(shown, "Replay verified:")
}

// lines is out's non-blank lines, with dir shown as the README shows it.
func lines(out, dir string) []string {
	var got []string
	for _, l := range strings.Split(strings.ReplaceAll(out, dir, readmeConsoleDir), "\n") {
		if strings.TrimSpace(l) != "" {
			got = append(got, l)
		}
	}
	return got
}

// compareShown checks got against the README's lines, one for one.
func compareShown(t *testing.T, what string, got, want []string) {
	t.Helper()
	if len(got) != len(want) {
		t.Errorf("%s: printed %d lines, the README shows %d:\n%s\nREADME:\n%s", what, len(got), len(want), strings.Join(got, "\n"), strings.Join(want, "\n"))
		return
	}
	for j := range got {
		if got[j] != want[j] && !shapeOf(want[j]).MatchString(got[j]) {
			t.Errorf("%s: line %d printed\n\t%s\nthe README shows\n\t%s", what, j+1, got[j], want[j])
		}
	}
}

// TestConsoleShapes pins the matching rules themselves.
func TestConsoleShapes(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		shown, printed string
		match          bool
	}{
		{"Committed manifest 5d0c… for run run-a (1 entry)", "Committed manifest a1047d9785032c3bc066ebfe973db3f5692c756e for run run-a (1 entry)", true},
		{"Committed manifest 5d0c… for run run-a (1 entry)", "Committed manifest a1047d for run run-b (1 entry)", false},
		{"merkle root a9b73469f1a6…, replay match 1/1", "merkle root a9b73469f1a6…, replay match 1/1", true},
		{"observed 2026-11-29T21:00:00Z → 2026-11-29T21:05:00Z", "observed 2026-12-01T23:31:30Z → 2026-12-01T23:31:31Z", true},
		{"observed 2026-11-29T21:00:00Z", "observed yesterday", false},
		{"sha256:c8b0bb212e93 → sha256:8f4b00474456", "sha256:c8b0bb212e93 → sha256:8f4b00474457", false},
		{"1 changed (x)", "1 changed (x) and more", false},
	} {
		if got := shapeOf(c.shown).MatchString(c.printed); got != c.match {
			t.Errorf("shape %q on %q = %v, want %v", c.shown, c.printed, got, c.match)
		}
	}
	steps := parseConsole("$ a \\\n    --b\nout 1\n\n$ c\n")
	if len(steps) != 2 || steps[0].cmd != "a \\\n    --b" || len(steps[0].want) != 1 || steps[1].cmd != "c" || len(steps[1].want) != 0 {
		t.Errorf("parseConsole = %+v", steps)
	}
}
