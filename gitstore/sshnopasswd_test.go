package gitstore

import (
	"errors"
	"strings"
	"testing"

	"github.com/readproof/readproof/internal/hint"
)

// With no passwd entry readproof can read for the user (a container run
// as a uid the image does not list, or an LDAP or SSSD user under a
// static readproof, which reads /etc/passwd alone), ~/.ssh/config is read
// under $HOME, said as a warning with a hint, rather than left unread:
// its Hostname, ProxyJump and RefuseConnection lines still count. Before,
// the user's configuration was skipped in silence, and a RefuseConnection
// or a ProxyJump for the host went unseen.
func TestSSHNoPasswdEntryReadsHOME(t *testing.T) {
	home := sshHome(t)
	t.Setenv("SSH_KNOWN_HOSTS", "")
	writeSSHConfig(t, home, "Host git.example.test\n  RefuseConnection yes\n")
	prev := sshHomeForTest
	t.Cleanup(func() { sshHomeForTest = prev })
	sshHomeForTest = func() (string, error) {
		return "", errors.New("no passwd entry for this user (uid 4242): user: unknown userid 4242")
	}
	conf := ReadSSHConfig()
	if conf.home != home {
		t.Errorf("home %q, want $HOME %q", conf.home, home)
	}
	if err := conf.Check("git.example.test"); err == nil || !strings.Contains(err.Error(), "ssh refuses to connect to this host") {
		t.Errorf("Check %v, want the RefuseConnection of $HOME's configuration followed", err)
	}
	var said []string
	for _, w := range conf.Warnings("git.example.test") {
		said = append(said, w.Error()+" (hint: "+hint.Of(w)+")")
	}
	all := strings.Join(said, "\n")
	for _, w := range []string{"no passwd entry for this user (uid 4242)", "under $HOME (" + home + ")", "No user exists for uid", "hint: give this uid an entry in /etc/passwd"} {
		if !strings.Contains(all, w) {
			t.Errorf("warnings:\n%s\ndo not say %q", all, w)
		}
	}
	if got := conf.knownHostsFiles(); len(got) == 0 || !strings.HasPrefix(got[0], home) {
		t.Errorf("known_hosts files %q, want $HOME's first", got)
	}
}
