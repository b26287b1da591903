package gitstore

// A KnownHostsCommand of the ssh configuration, run as OpenSSH 9.2 runs
// it (hostfile.c and sshconnect.c, load_hostkeys_command): its words
// split as ssh splits them (no shell), the tokens of each word after the
// first expanded, the program started with the environment kept, and its
// output read as one more known_hosts file, after the files. Before
// session 31 the command was not run: a @revoked line it prints, or the
// one key it lists for a host, was missed.

import (
	"context"
	"crypto/sha1"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"golang.org/x/crypto/ssh"

	"github.com/readproof/readproof/internal/hint"
)

// knownHostsCommandTimeout bounds a KnownHostsCommand's run: ssh waits on
// it without end, readproof does not hold a fetch on it.
const knownHostsCommandTimeout = 30 * time.Second

// knownHostsCommand is the KnownHostsCommand the configuration gives for
// a host.
type knownHostsCommand struct {
	st     setting  // the line
	alias  string   // the host as the URL names it
	argv   []string // its words, tokens not expanded
	tokens identityTokens
}

// knownHostsCommandFor is the KnownHostsCommand the first line giving it
// for alias names (set: firstsWithWords) (none for "none", in any case); nil for none. An error
// is a line ssh would not run for this host, naming it: a program not
// written from / (ssh: "path is not absolute"), a token or variable ssh
// does not expand there; ssh then goes on with the files alone, readproof
// does not.
func (c *SSHConfig) knownHostsCommandFor(set map[string]setting, alias, host, port, remoteUser string) (*knownHostsCommand, error) {
	st, ok := set["KnownHostsCommand"]
	if !ok {
		return nil, nil
	}
	argv, _ := sshArgs(st.value) // a quote not closed is refusedLine's
	if len(argv) == 0 || len(argv) == 1 && strings.EqualFold(argv[0], "none") {
		return nil, nil
	}
	k := &knownHostsCommand{st: st, alias: alias, argv: argv, tokens: identityTokens{home: c.home, localUser: localUserName(), host: host,
		remoteUser: remoteUser, alias: alias, keyAlias: c.hostKeyAlias(alias), port: port}}
	if !filepath.IsAbs(argv[0]) {
		return nil, k.refuse(fmt.Errorf("its program %q is not written from /, which ssh does not run (\"path is not absolute\")", argv[0]),
			"write the program's full path (command -v NAME prints it)")
	}
	for _, a := range argv[1:] { // the tokens are known before dialling
		if _, err := expandCommandTokens(a, k.tokens, commandKeyTokens{invocation: "HOSTNAME"}); err != nil {
			return nil, k.refuse(err, "write the word out, with %% for a %")
		}
	}
	return k, nil
}

// refuse is err as an error of the command's line, with fix as its hint.
func (k *knownHostsCommand) refuse(err error, fix string) error {
	return hint.With(&SSHConfigError{File: k.st.file, Line: k.st.line, Host: k.alias, Key: "KnownHostsCommand",
		Err: fmt.Errorf("%s%w", k.st.readThrough(), err)}, fix)
}

// commandKeyTokens are the values of a KnownHostsCommand's tokens of the
// lookup: %H, %I, and the host key's %t, %f and %K (NONE before the key
// is known, as ssh gives them when it orders its host key algorithms).
type commandKeyTokens struct {
	name       string // the name looked up ([host]:port, or the HostKeyAlias), %H but for ORDER
	invocation string // %I: ORDER, HOSTNAME or ADDRESS
	key        ssh.PublicKey
}

// expandCommandTokens expands the tokens of a KnownHostsCommand's word as
// ssh 9.2 does (misc.c, percent_dollar_expand; ssh_config(5), TOKENS):
// %% %C %d %f %H %h %I %i %K %k %L %l %n %p %r %t %u and ${NAME}. Values
// are put in whole (each word is one argument: no shell reads them). Any
// other token, a lone % at the end, a ${ not closed and a variable not
// set are refused, as ssh refuses them.
func expandCommandTokens(w string, x identityTokens, k commandKeyTokens) (string, error) {
	var b strings.Builder
	for i := 0; i < len(w); i++ {
		if strings.HasPrefix(w[i:], "${") {
			name, _, ok := strings.Cut(w[i+2:], "}")
			if !ok || name == "" {
				return "", errors.New("it holds a ${ with no name or no closing }, which ssh refuses")
			}
			v, set := os.LookupEnv(name)
			if !set {
				return "", fmt.Errorf("it names the environment variable ${%s}, which is not set: ssh refuses it (\"env var ${%s} has no value\")", name, name)
			}
			b.WriteString(v)
			i += 2 + len(name)
			continue
		}
		if w[i] != '%' {
			b.WriteByte(w[i])
			continue
		}
		if i+1 == len(w) {
			return "", errors.New("it ends in a lone %, which ssh refuses (\"invalid format\")")
		}
		i++
		switch tok := w[i]; tok {
		case '%':
			b.WriteByte('%')
		case 'd':
			b.WriteString(x.home)
		case 'u':
			b.WriteString(x.localUser)
		case 'h':
			b.WriteString(x.host)
		case 'r':
			b.WriteString(x.remoteUser)
		case 'n':
			b.WriteString(x.alias)
		case 'k':
			if x.keyAlias != "" {
				b.WriteString(x.keyAlias)
			} else {
				b.WriteString(x.alias)
			}
		case 'p':
			b.WriteString(x.port)
		case 'i':
			b.WriteString(strconv.Itoa(os.Getuid()))
		case 'l', 'L', 'C':
			h, err := os.Hostname()
			if err != nil || h == "" {
				return "", fmt.Errorf("%%%c needs the local host name, which is not known (%v)", tok, err)
			}
			switch tok {
			case 'L':
				h, _, _ = strings.Cut(h, ".")
			case 'C':
				sum := sha1.Sum([]byte(h + x.host + x.port + x.remoteUser))
				h = hex.EncodeToString(sum[:])
			}
			b.WriteString(h)
		case 'H':
			if k.invocation == "ORDER" {
				b.WriteString(x.host) // as ssh 9.2 gives it there, no port
			} else {
				b.WriteString(k.name)
			}
		case 'I':
			b.WriteString(k.invocation)
		case 't', 'f', 'K':
			if k.key == nil {
				b.WriteString("NONE") // as ssh gives them before the key is known
				continue
			}
			switch tok {
			case 't':
				b.WriteString(k.key.Type())
			case 'f':
				b.WriteString(ssh.FingerprintSHA256(k.key))
			case 'K':
				b.WriteString(base64.StdEncoding.EncodeToString(k.key.Marshal()))
			}
		default:
			r, _ := utf8.DecodeRuneInString(w[i:])
			return "", fmt.Errorf("%%%c is not a token ssh expands in a KnownHostsCommand (it refuses it: \"unknown key %%%c\"); ssh 9.2 expands %%%% %%C %%d %%f %%H %%h %%I %%i %%K %%k %%L %%l %%n %%p %%r %%t %%u there", r, r)
		}
	}
	return b.String(), nil
}

// run runs the command for the lookup k and returns its output, at most
// maxKnownHostsBytes, read once. An error names the line and the program,
// with a hint: a program that does not start, exits other than 0, prints
// more than the bound, runs past knownHostsCommandTimeout (killed with the
// processes it started) or the fetch, or exits leaving a process holding
// its output (not waited on past a second). ssh goes on
// with the files alone then; readproof does not take a host key on less
// than the command would have said (a @revoked line it prints).
func (k *knownHostsCommand) run(ctx context.Context, lookup commandKeyTokens) ([]byte, error) {
	args := make([]string, len(k.argv)-1)
	for i, a := range k.argv[1:] {
		v, err := expandCommandTokens(a, k.tokens, lookup)
		if err != nil {
			return nil, k.refuse(err, "write the word out, with %% for a %")
		}
		args[i] = v
	}
	fetch := ctx
	ctx, cancel := context.WithTimeout(ctx, knownHostsCommandTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, k.argv[0], args...)
	killsItsChildren(cmd) // stopped, with the processes it started
	// a process it leaves holding the output is not waited on: its pipe
	// is closed a second after the command exits (exec.ErrWaitDelay)
	cmd.WaitDelay = time.Second
	out := &cappedOutput{max: maxKnownHostsBytes}
	cmd.Stdout = out
	fix := "run the command as ssh would (ssh -G HOST shows it; its %H is " + lookup.name + ") and fix it, or set KnownHostsCommand none for the host and list its keys in a known_hosts file"
	if err := cmd.Start(); err != nil {
		return nil, k.refuse(fmt.Errorf("%s does not start: %w", k.argv[0], err), fix)
	}
	err := cmd.Wait()
	switch {
	case out.over:
		return nil, k.refuse(fmt.Errorf("%s prints more than %d MiB, more than readproof reads of a known_hosts file", k.argv[0], maxKnownHostsBytes>>20), fix)
	case fetch.Err() != nil:
		return nil, k.refuse(fmt.Errorf("%s was stopped: %w", k.argv[0], fetch.Err()), fix)
	case ctx.Err() == context.DeadlineExceeded:
		return nil, k.refuse(fmt.Errorf("%s did not finish within %v", k.argv[0], knownHostsCommandTimeout), fix)
	case errors.Is(err, exec.ErrWaitDelay):
		return nil, k.refuse(fmt.Errorf("%s exited but left a process holding its output, so what it prints is not known in full", k.argv[0]), fix)
	case err != nil:
		return nil, k.refuse(fmt.Errorf("%s failed (%w), so the host keys it lists are not known", k.argv[0], err), fix)
	}
	return out.b, nil
}

// cappedOutput keeps what a KnownHostsCommand prints, up to max bytes; a
// write past them fails (the command's output pipe is closed) and sets
// over.
type cappedOutput struct {
	b    []byte
	max  int
	over bool
}

func (o *cappedOutput) Write(p []byte) (int, error) {
	if len(o.b)+len(p) > o.max {
		o.over = true
		return 0, errors.New("more output than a known_hosts file")
	}
	o.b = append(o.b, p...)
	return len(p), nil
}

// linesFrom are the lines of the command's output for the lookup that
// name the host looked up, read as a known_hosts file (knownHostsDB.add).
func (k *knownHostsCommand) linesFrom(ctx context.Context, lookup commandKeyTokens) ([]*hostKeyLine, error) {
	out, err := k.run(ctx, lookup)
	if err != nil {
		return nil, err
	}
	db := &knownHostsDB{}
	if err := db.add(out, "KnownHostsCommand "+k.argv[0]); err != nil {
		return nil, k.refuse(err, "fix the command's output: one known_hosts line for each key")
	}
	return db.linesFor(lookup.name), nil
}
