package main

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/readproof/readproof/internal/testproc"
	"github.com/rogpeppe/go-internal/testscript"
)

// scriptEnvKeys are the variables a process started by a custom command
// gets from the script (testscript keeps its environment to itself).
var scriptEnvKeys = []string{"WORK", "PATH", "HOME", "TMPDIR", "XDG_CONFIG_HOME", "XDG_CACHE_HOME",
	"GIT_CONFIG_NOSYSTEM", "GIT_CONFIG_GLOBAL", "GIT_AUTHOR_NAME", "GIT_AUTHOR_EMAIL",
	"GIT_COMMITTER_NAME", "GIT_COMMITTER_EMAIL", "GOCOVERDIR", "GORACE", "DAEMON"}

func scriptEnv(ts *testscript.TestScript) []string {
	var env []string
	for _, k := range scriptEnvKeys {
		if v := ts.Getenv(k); v != "" {
			env = append(env, k+"="+v)
		}
	}
	return env
}

// gitDaemonCmd serves BASEDIR over git:// on 127.0.0.1 for the rest of the
// script, pushes included (receive-pack runs on this machine, so a
// remote's own hooks run): `gitdaemon BASEDIR` sets $DAEMON to
// git://127.0.0.1:PORT; BASEDIR/x.git is then $DAEMON/x.git. The daemon
// runs in a process group of its own, killed whole when the script ends.
// PORT is that of a testproc.Front in this process, which forwards to
// the daemon.
func gitDaemonCmd(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 1 {
		ts.Fatalf("usage: gitdaemon BASEDIR")
	}
	base := ts.MkAbs(args[0])
	// git talks to the daemon through a proxy that ACKs at once:
	// straight to it, most turns of every exchange stall 40 ms
	// (testproc.Front; 2.8 s of the team script's 5).
	d, err := testproc.StartFrontedDaemonOnFreePort(func(port int) *exec.Cmd {
		cmd := exec.Command("git", "daemon", "--verbose", "--reuseaddr", "--base-path="+base, "--export-all",
			"--enable=receive-pack", "--informative-errors", "--listen=127.0.0.1",
			"--port="+strconv.Itoa(port), base)
		cmd.Env = scriptEnv(ts)
		return cmd
	})
	ts.Check(err)
	ts.Defer(d.Close)
	ts.Setenv("DAEMON", fmt.Sprintf("git://127.0.0.1:%d", d.Port()))
}

// raceCmd runs one command in several directories at once, with the
// script's environment, and waits for all:
// `race [-win N] DIR... -- COMMAND [ARGS...]`. Without -win every one must
// exit 0; with it exactly N exit 0 and the others exit 1, in any order.
// $WON and $LOST name (by base name, space-separated) those that exited 0
// and 1; each one's output is in $WORK/race/NAME.stdout and NAME.stderr.
func raceCmd(ts *testscript.TestScript, neg bool, args []string) {
	win := -1
	if len(args) >= 2 && args[0] == "-win" {
		n, err := strconv.Atoi(args[1])
		if err != nil {
			ts.Fatalf("race: -win %q is not a number", args[1])
		}
		win, args = n, args[2:]
	}
	sep := -1
	for i, a := range args {
		if a == "--" {
			sep = i
			break
		}
	}
	if neg || sep < 1 || sep == len(args)-1 {
		ts.Fatalf("usage: race [-win N] DIR... -- COMMAND [ARGS...]")
	}
	dirs, command := args[:sep], args[sep+1:]
	out := ts.MkAbs("race")
	ts.Check(os.MkdirAll(out, 0o777))
	env := scriptEnv(ts)
	cmds := make([]*exec.Cmd, len(dirs))
	for i, d := range dirs {
		name := filepath.Base(ts.MkAbs(d))
		stdout, err := os.Create(filepath.Join(out, name+".stdout"))
		ts.Check(err)
		defer stdout.Close()
		stderr, err := os.Create(filepath.Join(out, name+".stderr"))
		ts.Check(err)
		defer stderr.Close()
		c := exec.Command(command[0], command[1:]...)
		c.Dir, c.Env, c.Stdout, c.Stderr = ts.MkAbs(d), env, stdout, stderr
		cmds[i] = c
	}
	for _, c := range cmds {
		ts.Check(c.Start())
	}
	var won, lost []string
	var bad []string
	for i, c := range cmds {
		err := c.Wait()
		name := filepath.Base(ts.MkAbs(dirs[i]))
		var ee *exec.ExitError
		switch {
		case err == nil:
			won = append(won, name)
		case errors.As(err, &ee) && ee.ExitCode() == 1 && win >= 0:
			lost = append(lost, name)
		default:
			bad = append(bad, fmt.Sprintf("%s: %v", name, err))
		}
	}
	ts.Logf("race: won %v, lost %v", won, lost)
	if len(bad) > 0 {
		ts.Fatalf("race: %s", strings.Join(bad, "; "))
	}
	if win >= 0 && len(won) != win {
		ts.Fatalf("race: %d of %d exited 0 (%v), want %d", len(won), len(dirs), won, win)
	}
	ts.Setenv("WON", strings.Join(won, " "))
	ts.Setenv("LOST", strings.Join(lost, " "))
}
