package gitstore

import (
	"errors"
	"os"
	"os/user"
	"path/filepath"
	"strings"
	"testing"
)

// ~user and ${NAME} in an IdentityFile are expanded as ssh expands them:
// that user's home directory (extra slashes after it taken off), the
// variable's value (its % kept as written); a user the system does not
// know, a variable not set, ${} and a ${ not closed refuse the fetch,
// naming the line, as ssh exits then. Before, ~user and ${NAME} were
// refused. Each case is checked against what ssh loads when ssh is there.
func TestSSHIdentityTildeUserAndEnvAsSSH(t *testing.T) {
	home := sshHome(t)
	me, err := user.Current()
	if err != nil || me.Username == "" || me.HomeDir == "" {
		t.Skipf("no passwd entry for this user: %v", err)
	}
	t.Setenv("READPROOF_TEST_KEY", "deploy%h")
	for _, c := range []struct{ value, want, refused string }{
		{value: "~" + me.Username + "/k_${READPROOF_TEST_KEY}", want: filepath.Join(me.HomeDir, "k_deploy%h")},
		{value: "~" + me.Username + "//keys/id", want: filepath.Join(me.HomeDir, "keys/id")},
		{value: "/k/${READPROOF_TEST_KEY}-%r", want: "/k/deploy%h-git"},
		{value: "~readproof-no-such-user/k", refused: `the user "readproof-no-such-user", whom this system does not know`},
		{value: "/k/${READPROOF_TEST_UNSET}", refused: "${READPROOF_TEST_UNSET}, which is not set"},
		{value: "/k/${}", refused: "${}, which ssh refuses"},
		{value: "/k/${READPROOF_TEST_KEY", refused: "a ${ has no closing }"},
	} {
		path := writeSSHConfig(t, home, "Host *\n  User git\n  IdentityFile "+c.value+"\n")
		k, err := readSSHConfigs(filepath.Join(home, "no-system-config")).keys(t.Context(), "git.example.test", "git.example.test", "git")
		if c.refused != "" {
			var ce *SSHConfigError
			if !errors.As(err, &ce) || ce.File != path || ce.Line != 3 || !strings.Contains(err.Error(), c.refused) {
				t.Errorf("%s: %v, want line 3 refused saying %q", c.value, err, c.refused)
			}
		} else if err != nil {
			t.Errorf("%s: %v, want %s tried", c.value, err, c.want)
		} else if len(k.tried) != 1 || k.tried[0] != c.want {
			t.Errorf("%s: tried %q, want %s", c.value, k.tried, c.want)
		} else {
			shown := c.want
			if strings.Contains(c.value, "${") {
				shown = c.value // as written: a variable's value is not shown
			}
			if !strings.Contains(strings.Join(k.skipped, "\n"), shown+" does not exist") {
				t.Errorf("%s: not offered %q, want %s said not to exist", c.value, k.skipped, shown)
			}
		}
		// ssh reads the keys once connected (ProxyCommand true), and
		// exits before naming any when it cannot expand one
		oracle := filepath.Join(home, "oracle.conf")
		if err := os.WriteFile(oracle, []byte("Host *\n  User git\n  ProxyCommand true\n  IdentityFile "+c.value+"\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		loads, _, ok := sshLoads(t, oracle, "git.example.test")
		if !ok {
			continue
		}
		if c.refused != "" && len(loads) != 0 || c.want != "" && (len(loads) != 1 || loads[0] != c.want) {
			t.Errorf("%s: ssh does not agree (it loads %q): the case is wrong", c.value, loads)
		}
	}
}

// A key file path expanded from an environment variable (${NAME}) is
// said as the IdentityFile writes it, never with the variable's value:
// the keys offered and those not offered, with why, reach the user, an
// MCP client and an evidence bundle's replay. Before, the value was in
// every message naming the file (a key not found, readable by others, a
// key the server refused).
func TestSSHIdentityEnvValueNotShown(t *testing.T) {
	s, home := newKeyServer(t)
	s.allow(newKey(t).PublicKey())
	const secret = "s3cr3t-t0ken-value"
	t.Setenv("READPROOF_TEST_SECRET", secret)
	dir := filepath.Join(home, ".ssh")
	for _, c := range []struct {
		name, want string
		setup      func(path string)
	}{
		{"absent", "~/.ssh/${READPROOF_TEST_SECRET} does not exist", func(string) {}},
		{"readable by others", "~/.ssh/${READPROOF_TEST_SECRET} is readable by others (mode 0644), which ssh refuses for a private key: chmod 600 ~/.ssh/${READPROOF_TEST_SECRET}", func(p string) { writeKeyFile(t, p, 0o644, "") }},
		{"refused by the server", "offered ~/.ssh/${READPROOF_TEST_SECRET}", func(p string) { writeKeyFile(t, p, 0o600, "") }},
	} {
		p := filepath.Join(dir, secret)
		_ = os.Remove(p)
		c.setup(p)
		writeSSHConfig(t, home, "Host *\n  IdentityFile ~/.ssh/${READPROOF_TEST_SECRET}\n")
		err := s.fetchSSH(t, "git@git.example.test:r.git")
		var ae *SSHAuthError
		if !errors.As(err, &ae) {
			t.Fatalf("%s: fetch %v, want an SSHAuthError", c.name, err)
		}
		said := err.Error() + "\n" + strings.Join(ae.Offered, "\n") + "\n" + strings.Join(ae.Skipped, "\n")
		if strings.Contains(said, secret) {
			t.Errorf("%s: the variable's value is shown:\n%s", c.name, said)
		}
		if !strings.Contains(said, strings.TrimPrefix(c.want, "offered ")) {
			t.Errorf("%s: %s\ndoes not say %q", c.name, said, c.want)
		}
	}
}
