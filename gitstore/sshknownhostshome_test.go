package gitstore

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The host key is looked up in ~/.ssh/known_hosts under the same home
// directory ~/.ssh/config is read from (the passwd entry's, as ssh reads
// both), not $HOME's: under sudo with HOME kept, ssh checks the host
// against the target user's known_hosts. Before, the configuration and
// the keys came from the passwd entry's home and known_hosts from $HOME,
// so a host the user's known_hosts lists was refused as unknown, and one
// only $HOME's lists was taken.
func TestSSHKnownHostsFromConfigHome(t *testing.T) {
	s, home := newKeyServer(t) // home's known_hosts lists the server
	s.allow(writeKeyFile(t, filepath.Join(home, ".ssh", "id_ed25519"), 0o600, "").PublicKey())
	prev := sshHomeForTest
	t.Cleanup(func() { sshHomeForTest = prev })
	sshHomeForTest = func() (string, error) { return home, nil } // the passwd entry's
	other := sshHome(t)                                          // $HOME, another user's
	if err := s.open(t, "git@git.example.test:r.git"); err != nil {
		t.Errorf("known_hosts under the configuration's home lists the host: %v, want it known", err)
	}

	// the other way: only $HOME's known_hosts lists the host
	data, err := os.ReadFile(filepath.Join(home, ".ssh", "known_hosts"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(other, ".ssh", "known_hosts"), data, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(filepath.Join(home, ".ssh", "known_hosts")); err != nil {
		t.Fatal(err)
	}
	if err := s.open(t, "git@git.example.test:r.git"); err == nil || !strings.Contains(err.Error(), "known") {
		t.Errorf("only $HOME's known_hosts lists the host: %v, want it refused as not known", err)
	}
}
