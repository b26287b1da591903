package gitstore

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/readproof/readproof/internal/text"
)

// A keyword OpenSSH 9.2 does not know refuses the whole configuration,
// as ssh refuses it ("Bad configuration option"), unless an IgnoreUnknown
// in force before it lists it: the refusal names the file, the line and
// the keyword, with the spelling meant or the IgnoreUnknown to write.
// Before, readproof read past it, so that it fetched over a configuration
// with which ssh, and git, connect to no host. Each case is checked
// against ssh -G when ssh is there.
func TestSSHConfigUnknownKeyword(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	dir := filepath.Join(home, ".ssh")
	if err := os.Mkdir(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	config, inc := filepath.Join(dir, "config"), filepath.Join(dir, "inc.conf")
	cases := []struct {
		name, conf, inc string
		file            string // the file the refusal names; "" for none
		line            int
		want            []string
	}{
		{name: "misspelt", conf: "Host git.example.test\n  Hostnam real.example.test\n", file: config, line: 2,
			want: []string{`the keyword "Hostnam"`, `Bad configuration option: hostnam`, "did you mean Hostname?", "IgnoreUnknown Hostnam"}},
		{name: "quoted", conf: "\"Bogus\" x\n", file: config, line: 1, want: []string{`"Bogus"`}},
		{name: "in another host's block", conf: "Host other.example.test\n  UseKeyring yes\n", file: config, line: 2},
		{name: "in a Match block", conf: "Match host other.example.test\n  UseKeyring yes\n", file: config, line: 2},
		{name: "ignored", conf: "IgnoreUnknown UseKeyring,AddKeysToKeyring\nHost *\n  UseKeyring yes\n"},
		{name: "ignored by a pattern, in any case", conf: "ignoreunknown use*\nHost *\n  USEKEYRING yes\n"},
		{name: "ignored in a Match all block", conf: "Match all\n  IgnoreUnknown UseKeyring\nHost *\n  UseKeyring yes\n"},
		{name: "IgnoreUnknown after it", conf: "Host *\n  UseKeyring yes\n  IgnoreUnknown UseKeyring\n", file: config, line: 2},
		{name: "IgnoreUnknown for another host", conf: "Host other.example.test\n  IgnoreUnknown UseKeyring\nHost *\n  UseKeyring yes\n", file: config, line: 4},
		{name: "IgnoreUnknown negated", conf: "IgnoreUnknown *,!usekeyring\nUseKeyring yes\n", file: config, line: 2,
			want: []string{"add it to the first IgnoreUnknown line"}},
		{name: "the first IgnoreUnknown wins", conf: "IgnoreUnknown a\nIgnoreUnknown b\nb x\n", file: config, line: 3},
		{name: "included", conf: "Host other.example.test\n  Include inc.conf\n", inc: "IgnoreUnknown b\nb x\n", file: inc, line: 2,
			want: []string{"read through the Include on " + config + " line 2"}},
		{name: "ignored in an included file", conf: "Host git.example.test\n  Include inc.conf\nHost *\n  b x\n", inc: "IgnoreUnknown b\n"},
		{name: "deprecated, unsupported, aliases", conf: "Cipher blowfish\nRhostsRSAAuthentication yes\nProtocol 2\nChallengeResponseAuthentication no\nPubkeyAcceptedKeyTypes ssh-ed25519\n"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_ = os.Remove(inc)
			writeSSHConfig(t, home, c.conf)
			if c.inc != "" {
				if err := os.WriteFile(inc, []byte(c.inc), 0o600); err != nil {
					t.Fatal(err)
				}
			}
			err := readSSHConfigs(filepath.Join(home, "no-system-config")).Check("git.example.test")
			var ce *SSHConfigError
			switch {
			case c.file == "" && err != nil:
				t.Errorf("Check: %v, want none", err)
			case c.file != "" && (!errors.As(err, &ce) || ce.File != c.file || ce.Line != c.line || !strings.Contains(err.Error(), "OpenSSH 9.2")):
				t.Errorf("Check: %v, want a refusal of an unknown keyword naming %s line %d", err, c.file, c.line)
			}
			for _, w := range c.want {
				if err == nil || !strings.Contains(err.Error(), w) {
					t.Errorf("Check: %v, want it to say %q", err, w)
				}
			}
			if out, refused, ok := sshG(t, config, "git.example.test"); ok && refused != (c.file != "") {
				t.Errorf("ssh -G refused: %v, readproof: %v\n%s", refused, err, out)
			}
		})
	}
}

// A fetch over a configuration with a keyword ssh does not know stops
// before any connection.
func TestSSHConfigUnknownKeywordRefusesFetch(t *testing.T) {
	s, home := newKeyServer(t)
	writeSSHConfig(t, home, "Host git.example.test\n  IdentitiyFile ~/.ssh/deploy\n")
	asked, err := fetchDialled(t, "git@git.example.test:r.git", s.target)
	var ce *SSHConfigError
	if !errors.As(err, &ce) || ce.Line != 2 || !strings.Contains(err.Error(), "did you mean IdentityFile?") || len(asked) != 0 {
		t.Errorf("fetch: %v (dialled %q), want a refusal of line 2 before dialling", err, asked)
	}
}

// The keywords listed are those ssh takes, and a keyword one letter off
// one of them is refused by ssh as readproof refuses it: the list is
// checked against ssh -G (skipped without ssh).
func TestSSHKeywordsAsSSHReadsThem(t *testing.T) {
	if _, err := exec.LookPath("ssh"); err != nil {
		t.Skip("no ssh")
	}
	if out, _ := exec.Command("ssh", "-V").CombinedOutput(); !strings.Contains(string(out), "OpenSSH_9.2") {
		t.Skipf("the list is OpenSSH 9.2's, this is %s", out)
	}
	dir := t.TempDir()
	conf := filepath.Join(dir, "config")
	bad := func(line string) bool {
		t.Helper()
		if err := os.WriteFile(conf, []byte(line+"\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		out, _, _ := sshG(t, conf, "h.example.test")
		return strings.Contains(out, "Bad configuration option")
	}
	for low, info := range sshKeywords() {
		if strings.ToLower(info.name) != low {
			t.Errorf("%s listed as %s", info.name, low)
		}
		if info.kind == sshKeywordLater {
			// a later ssh's: 9.2 refuses it, readproof takes it
			if !bad(info.name + " x") {
				t.Errorf("ssh 9.2 takes the keyword %s, listed as a later ssh's", info.name)
			}
			continue
		}
		if bad(info.name + " x") {
			t.Errorf("ssh refuses the keyword %s, listed as one it knows", info.name)
		}
		if _, listed := sshKeywords()[low[1:]]; !listed && !bad(low[1:]+" x") {
			t.Errorf("ssh takes the keyword %s, not listed", low[1:])
		}
	}
	for _, k := range []string{"UseKeyring", "UseDNS"} {
		if _, listed := sshKeywords()[strings.ToLower(k)]; listed || !bad(k+" x") {
			t.Errorf("%s: listed %v; ssh 9.2 refuses it", k, listed)
		}
	}
}

// A keyword of a later OpenSSH or of Apple's ssh (UseKeychain under Host *
// is common on macOS) does not refuse the configuration: the user's own
// ssh may read it. Of them readproof honours RefuseConnection, with which
// ssh 10.1 connects to no host the block applies to.
func TestSSHConfigLaterKeywords(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	if err := os.Mkdir(filepath.Join(home, ".ssh"), 0o700); err != nil {
		t.Fatal(err)
	}
	config := filepath.Join(home, ".ssh", "config")
	for _, c := range []struct {
		name, conf string
		line       int    // of the refusal; 0 for none
		refusal    string // what it says, for a value ssh 10.1 refuses; "" for RefuseConnection yes
	}{
		{name: "macOS", conf: "Host *\n  UseKeychain yes\n  AddKeysToAgent yes\n"},
		{name: "OpenSSH 9.4 to 10.1", conf: "Tag t\nObscureKeystrokeTiming no\nChannelTimeout session=5m\nVersionAddendum none\nWarnWeakCrypto no\n"},
		{name: "RefuseConnection", conf: "Host other.example.test\n  RefuseConnection no\nHost git.example.test\n  RefuseConnection yes\n", line: 4},
		{name: "RefuseConnection for another host", conf: "Host other.example.test\n  RefuseConnection yes\n"},
		{name: "RefuseConnection no first", conf: "Host git.example.test\n  RefuseConnection no\nHost *\n  RefuseConnection yes\n"},
		// ssh 10.1 refuses the configuration for these in any block
		{name: "RefuseConnection neither yes nor no", conf: "Host other.example.test\n  RefuseConnection maybe\n", line: 2, refusal: "neither yes nor no"},
		{name: "RefuseConnection of two words", conf: "Host other.example.test\n  RefuseConnection yes no\n", line: 2, refusal: "takes one word"},
	} {
		t.Run(c.name, func(t *testing.T) {
			writeSSHConfig(t, home, c.conf)
			err := readSSHConfigs(filepath.Join(home, "no-system-config")).Check("git.example.test")
			if c.line == 0 {
				if err != nil {
					t.Fatalf("%q: %v, want it read", c.conf, err)
				}
				return
			}
			var ce *SSHConfigError
			if c.refusal != "" {
				if !errors.As(err, &ce) || ce.File != config || ce.Line != c.line || !strings.Contains(err.Error(), c.refusal) {
					t.Fatalf("%q: %v, want a refusal naming %s line %d saying %q", c.conf, err, config, c.line, c.refusal)
				}
				return
			}
			if !errors.As(err, &ce) || ce.File != config || ce.Line != c.line || ce.Key != "RefuseConnection" {
				t.Fatalf("%q: %v, want a refusal naming %s line %d", c.conf, err, config, c.line)
			}
		})
	}
}

// A RefuseConnection in a Match block that may apply to the host (where
// it is mostly written) is said as a warning, as any line readproof reads
// in a Match block it does not apply; one for another host is not. Before,
// it was passed over in silence, where ssh 10.1 connects to no host.
func TestSSHConfigRefuseConnectionInMatchWarned(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	if err := os.Mkdir(filepath.Join(home, ".ssh"), 0o700); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		conf string
		warn bool
	}{
		{"Match host git.example.test\n  RefuseConnection yes\n", true},
		{"Match host other.example.test\n  RefuseConnection yes\n", false},
	} {
		writeSSHConfig(t, home, c.conf)
		warns := readSSHConfigs(filepath.Join(home, "no-system-config")).Warnings("git.example.test")
		said := len(warns) == 1 && strings.Contains(warns[0].Error(), "RefuseConnection is not used") && strings.Contains(warns[0].Error(), " line 1: ")
		if said != c.warn || (!c.warn && len(warns) != 0) {
			t.Errorf("%q: warnings %v, want a warning of the Match block's RefuseConnection: %v", c.conf, warns, c.warn)
		}
	}
}

// Any line is checked for an IdentityFile, IdentitiesOnly or
// IgnoreUnknown value ssh refuses without a panic, a refusal naming that
// line; and the keyword a hint offers for any word is one ssh reads, two
// edits away at most.
func FuzzSSHKeywordLines(f *testing.F) {
	for _, s := range []string{"IdentityFile a b\n", "IdentityFile '~/a b'\n", "identitiesonly TRUE\n", "IdentitiesOnly yes no\n",
		"IdentitiesOnly \"\"\n", "# x\nIgnoreUnknown a,b c\n", "Hostnam x\n", "UseKeyring", "IdentityFile2 \"x\" y\n", "IdentitiesOnly=maybe\n"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		var r *sshRefusal
		if err := refusedLine([]byte(s)); errors.As(err, &r) && (r.line < 1 || r.line > strings.Count(s, "\n")+1) {
			t.Errorf("refusedLine(%q) = %v: not a line of it", s, err)
		}
		if near := nearestSSHKeyword(s); near != "" {
			if info, ok := sshKeywords()[strings.ToLower(near)]; !ok || info.kind != sshKeyword || text.EditDistance(strings.ToLower(s), strings.ToLower(near)) > 2 {
				t.Errorf("nearestSSHKeyword(%q) = %q", s, near)
			}
		}
	})
}
