package main

import (
	"bytes"
	"flag"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/readproof/readproof/gitstore"
	"github.com/readproof/readproof/internal/commands"
	"github.com/readproof/readproof/internal/testproc"
)

func TestMain(m *testing.M) {
	// the scripts' ~/.ssh/config is under their HOME ($WORK), not the
	// passwd entry's home ssh reads: in the readproof they start, too
	gitstore.SSHHomeFromEnvForTest()
	// testproc.Run fails the run if a test leaves a process behind.
	testscript.Main(procChecked{m}, map[string]func(){
		"readproof": func() { os.Exit(commands.Main(os.Args, os.Stdin, os.Stdout, os.Stderr)) },
		"peakrss":   peakRSSMain,
	})
}

type procChecked struct{ m *testing.M }

func (p procChecked) Run() int {
	// The scripts and process tests mostly wait on the readproof and git
	// processes they start (and on their fsyncs), so run more of them at
	// once than there are CPUs; an explicit -parallel wins.
	flag.Set("test.parallel", strconv.Itoa(max(4, 2*runtime.GOMAXPROCS(0))))
	return testproc.Run(p.m)
}

// TestScripts runs the CLI scenarios in testdata/script. Each script runs in
// its own directory with HOME pointing there; git reads neither the user's
// nor the system's configuration (scriptGitConfig instead).
func TestScripts(t *testing.T) {
	t.Parallel()
	testscript.Run(t, scriptParams(t, "testdata/script"))
}

// TestLeanTestBinary: every `exec readproof` of the scripts starts this
// test binary (about 1,400 processes a run), so a module linked into it for
// one test adds its package initialisation to every one of them. Tests that
// need these modules live in the package they test: the OTLP receiver in
// internal/commands (otel_test.go), the workflow lint and the YAML of the CI
// recipes in examples/ci. (The test binary's build information lists the
// main package's modules only, so this looks for the packages' function
// names, which the binary keeps even stripped.)
func TestLeanTestBinary(t *testing.T) {
	t.Parallel()
	exe, err := os.Executable()
	if err != nil {
		t.Skip(err)
	}
	bin, err := os.ReadFile(exe)
	if err != nil {
		t.Skip(err)
	}
	for _, heavy := range []string{"google.golang.org/protobuf/", "google.golang.org/grpc", "go.opentelemetry.io/proto/", "go.yaml.in/yaml/", "gopkg.in/yaml", "github.com/rhysd/actionlint"} {
		// a function name starts after the NUL that ends the one before
		for rest := bin; ; {
			i := bytes.Index(rest, []byte(heavy))
			if i < 0 {
				break
			}
			if i > 0 && rest[i-1] == 0 {
				t.Errorf("the root test binary links %s: move the test that needs it to the package it tests", heavy)
				break
			}
			rest = rest[i+len(heavy):]
		}
	}
}

func scriptParams(t *testing.T, dir string) testscript.Params {
	_, gitErr := exec.LookPath("git")
	return testscript.Params{
		Dir:                 dir,
		RequireExplicitExec: true,
		UpdateScripts:       os.Getenv("READPROOF_UPDATE_SCRIPTS") != "",
		Setup: func(e *testscript.Env) error {
			e.Setenv("HOME", e.WorkDir)
			e.Setenv("XDG_CONFIG_HOME", filepath.Join(e.WorkDir, ".config"))
			e.Setenv("XDG_CACHE_HOME", filepath.Join(e.WorkDir, ".cache"))
			e.Setenv("GIT_CONFIG_NOSYSTEM", "1")
			e.Setenv("CTRL_ID", "run\x01x")
			// git's own housekeeping off: every push into a remote here
			// (receive.autogc), and the scripts' git commit, merge and fetch
			// (gc.auto, maintenance.auto), would start a `git gc --auto` or
			// `git maintenance run --auto` that finds too few objects to act
			// on. readproof's own git commands set the same keys.
			gitconfig := filepath.Join(e.WorkDir, ".gitconfig")
			if err := os.WriteFile(gitconfig, []byte(scriptGitConfig), 0o644); err != nil {
				return err
			}
			e.Setenv("GIT_CONFIG_GLOBAL", gitconfig)
			e.Setenv("GIT_AUTHOR_NAME", "test")
			e.Setenv("GIT_AUTHOR_EMAIL", "test@example.com")
			e.Setenv("GIT_COMMITTER_NAME", "test")
			e.Setenv("GIT_COMMITTER_EMAIL", "test@example.com")
			return nil
		},
		Cmds: scriptCmds,
		Condition: func(cond string) (bool, error) {
			switch cond {
			case "git":
				return gitErr == nil, nil
			case "http-backend":
				// git http-backend, which githttp serves (some git packages
				// ship it apart)
				out, err := exec.Command("git", "--exec-path").Output()
				if err != nil {
					return false, nil
				}
				_, err = os.Stat(filepath.Join(strings.TrimSpace(string(out)), "git-http-backend"))
				return err == nil, nil
			case "root":
				// permission bits do not stop root: tests of a read-only
				// store skip as root.
				return os.Geteuid() == 0, nil
			}
			return false, nil
		},
	}
}

// scriptGitConfig is the scripts' global git configuration ($WORK/.gitconfig):
// the user's own and the system's are never read.
const scriptGitConfig = "[gc]\n\tauto = 0\n[maintenance]\n\tauto = false\n[receive]\n\tautogc = false\n"

// scriptCmds are the custom testscript commands, every one listed here (the
// functions live in the _test file named beside each).
var scriptCmds = map[string]func(*testscript.TestScript, bool, []string){
	"tamper": tamperCmd,
	// unpack STORE: every object of the store's packs written out loose
	// and the packs removed, so that a script can damage one object's file
	"unpack": func(ts *testscript.TestScript, neg bool, args []string) {
		if neg || len(args) != 1 {
			ts.Fatalf("usage: unpack STORE")
		}
		ts.Check(gitstore.UnpackForTest(ts.MkAbs(args[0])))
	},
	// exits N COMMAND [ARGS...]: the exact exit status (receipts_cli_test.go)
	"exits": exitsCmd,
	// gitdaemon BASEDIR: git:// with receive-pack on 127.0.0.1, sets $DAEMON (main_daemon_test.go)
	"gitdaemon": gitDaemonCmd,
	// cijob github|gitlab|readme: run the examples/ci job, or docs/README-ci.md's, in the current directory (ci_examples_test.go)
	"cijob": ciJobCmd,
	// notesink STATUS: a GitLab notes API stand-in for the GitLab job, sets $CI_API_V4_URL (ci_examples_test.go)
	"notesink": noteSinkCmd,
	// race [-win N] DIR... -- COMMAND [ARGS...]: concurrent runs, either order (main_daemon_test.go)
	"race": raceCmd,
	// evedit, commitedit, mksigners: tamper with bundles and commits (evidence_cli_test.go)
	"evedit":     evEditCmd,
	"commitedit": commitEditCmd,
	"mksigners":  mkSignersCmd,
	// evexport-unchecked STORE RUN OUT: a bundle of a forged run, as export wrote it before session 24 (evidence_cli_test.go)
	"evexport-unchecked": evExportUncheckedCmd,
	// httpserve, httpcount: an httptest source and its request count (main_http_test.go)
	"httpserve": httpServeCmd,
	"httpcount": httpCountCmd,
	// githttp NAME BASEDIR USER PASS: git http-backend behind Basic auth, sets $NAME_ADDR (main_http_test.go)
	"githttp": gitHTTPCmd,
	// extract-probe-line: the probe line `run mount --probe` printed (main_probe_test.go)
	"extract-probe-line": extractProbeLineCmd,
	// halfdone GITDIR abort|reopen RUN: the refs a killed abort or reopen leaves (process_abort_test.go)
	"halfdone": halfDoneCmd,
	// sshserve BASEDIR AUTHORIZED [USER]: git-upload-pack over ssh on 127.0.0.1 to one key (and user), sets $SSH_PORT (main_ssh_test.go)
	"sshserve": sshServeCmd,
	// closedport VAR: sets $VAR to a 127.0.0.1 port nothing listens on (main_test.go)
	"closedport": closedPortCmd,
	// jsonnorm [-num KEY]... [-sha256 KEY]... FILE OUT: FILE with ids, times and $WORK made placeholders, for cmp with a golden file (jsonnorm_test.go)
	"jsonnorm": jsonNormCmd,
	// plantpolicycache CACHE POLICY KEYFILE|-: the policy cache of another file, made to match POLICY and sealed with a key (policy_cache_plant_test.go)
	"plantpolicycache": plantPolicyCacheCmd,
	// policycache VAR STORE POLICY: sets $VAR to the policy cache of POLICY in STORE (policy_cache_plant_test.go)
	"policycache": policyCacheCmd,
}

// closedPortCmd sets an environment variable to a loopback port that was
// free a moment ago: bound, read and closed again. A fixed port (1, say)
// is closed only until some process on the machine listens there.
func closedPortCmd(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 1 {
		ts.Fatalf("usage: closedport VAR")
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	ts.Check(err)
	port := ln.Addr().(*net.TCPAddr).Port
	ts.Check(ln.Close())
	ts.Setenv(args[0], strconv.Itoa(port))
}

// tamperCmd flips one byte of a loose blob in place, keeping its name, as a
// disk error or an attacker would: `tamper STORE REV`.
func tamperCmd(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 2 {
		ts.Fatalf("usage: tamper STORE REV")
	}
	store := ts.MkAbs(args[0])
	out, err := exec.Command("git", "--git-dir", store, "rev-parse", args[1]).Output()
	if err != nil {
		ts.Fatalf("rev-parse %s: %v", args[1], err)
	}
	oid := strings.TrimSpace(string(out))
	// a write of a few objects makes a small pack: the object's own file
	ts.Check(gitstore.UnpackForTest(store))
	ts.Check(testproc.DamageLoose(store, oid))
}
