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
		} else if !strings.Contains(strings.Join(k.skipped, "\n"), c.want+" does not exist") {
			t.Errorf("%s: not offered %q, want %s tried", c.value, k.skipped, c.want)
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
