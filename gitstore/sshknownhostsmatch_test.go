package gitstore

import (
	"errors"
	"path/filepath"
	"strings"
	"testing"
)

// A UserKnownHostsFile or GlobalKnownHostsFile line of a Match block that
// applies to the host is applied as ssh applies it: the first value
// obtained wins, whether it stands in a Match block or a Host block, and
// the block is no longer said not to be applied for it. A Match block
// that does not apply, or that may (exec), is passed over, the latter
// said. Checked with ssh -G when ssh is there. Before, every Match
// block's line was said and never applied, so that the files ssh reads
// for the host went unread.
func TestSSHKnownHostsFileInMatch(t *testing.T) {
	home := sshHome(t)
	t.Setenv("SSH_KNOWN_HOSTS", "")
	for _, c := range []struct {
		conf         string
		user, global string
		said         bool // a Match block said not applied
	}{
		{conf: "Match host git.example.test\n  UserKnownHostsFile /kh/match\nHost git.example.test\n  UserKnownHostsFile /kh/host\n  GlobalKnownHostsFile /kh/global\n",
			user: "/kh/match", global: "/kh/global"},
		{conf: "Host git.example.test\n  UserKnownHostsFile /kh/host\nMatch all\n  UserKnownHostsFile /kh/match\n  GlobalKnownHostsFile /kh/mglobal\n",
			user: "/kh/host", global: "/kh/mglobal"},
		{conf: "Match host other.example.test\n  UserKnownHostsFile /kh/match\nHost *\n  UserKnownHostsFile /kh/host\n  GlobalKnownHostsFile /kh/global\n",
			user: "/kh/host", global: "/kh/global"},
		{conf: "Match originalhost git.example.test exec true\n  UserKnownHostsFile /kh/match\nHost *\n  UserKnownHostsFile /kh/host\n  GlobalKnownHostsFile /kh/global\n",
			user: "/kh/host", global: "/kh/global", said: true},
		{conf: "Match host git.example.test\n  UserKnownHostsFile # none yet\n  User git\nMatch all\n  UserKnownHostsFile /kh/second\n  GlobalKnownHostsFile /kh/global\n",
			user: "/kh/second", global: "/kh/global", said: true},
	} {
		path := writeSSHConfig(t, home, c.conf)
		conf := ReadSSHConfig()
		if err := conf.Check("git.example.test"); err != nil {
			t.Fatal(err)
		}
		files, err := conf.knownHostsFor("git.example.test", "git.example.test", "22", "git")
		if want := []string{filepath.FromSlash(c.user), filepath.FromSlash(c.global)}; err != nil || !equalStrings(files, want) {
			t.Errorf("%q: known_hosts files %q, %v; want %q", c.conf, files, err, want)
		}
		said := false
		for _, w := range conf.Warnings("git.example.test") {
			var ce *SSHConfigError
			if errors.As(w, &ce) && ce.Key == "Match" {
				said = true
				_, keys, _ := strings.Cut(w.Error(), "this one's ")
				if strings.Contains(keys, "KnownHostsFile") && !strings.Contains(c.conf, "exec") {
					t.Errorf("%q: %v, a known_hosts line said not applied", c.conf, w)
				}
			}
		}
		if said != c.said {
			t.Errorf("%q: a Match block said not applied: %v, want %v", c.conf, said, c.said)
		}
		if strings.Contains(c.conf, "exec") {
			continue // ssh runs it; the block then applies
		}
		if out, refused, ok := sshG(t, path, "git.example.test"); ok && (refused || !strings.Contains(out, "\nuserknownhostsfile "+c.user+"\n") || !strings.Contains(out, "\nglobalknownhostsfile "+c.global+"\n")) {
			t.Errorf("%q: ssh -G reads other files: the case is wrong\n%s", c.conf, out)
		}
	}
}

// A HostKeyAlias line of a Match block that applies to the host is
// applied as ssh applies it, the first value obtained winning; one in a
// block that may apply (exec) is said and passed over. Checked with ssh -G
// when ssh is there. Before, a Match block's HostKeyAlias was passed over
// and not said: the host key was looked up under the host name, where ssh
// looks it up under the alias, and a key listed for the name alone was
// taken.
func TestSSHHostKeyAliasInMatch(t *testing.T) {
	home := sshHome(t)
	for _, c := range []struct {
		conf, alias string
		said        bool
	}{
		{conf: "Match host git.example.test\n  HostKeyAlias Matched.Alias\nHost git.example.test\n  HostKeyAlias host.alias\n", alias: "matched.alias"},
		{conf: "Host git.example.test\n  HostKeyAlias host.alias\nMatch all\n  HostKeyAlias matched.alias\n", alias: "host.alias"},
		{conf: "Match host other.example.test\n  HostKeyAlias matched.alias\n", alias: ""},
		{conf: "Match originalhost git.example.test exec true\n  HostKeyAlias matched.alias\n", alias: "", said: true},
	} {
		path := writeSSHConfig(t, home, c.conf)
		conf := ReadSSHConfig()
		if err := conf.Check("git.example.test"); err != nil {
			t.Fatal(err)
		}
		if got := conf.hostKeyAlias("git.example.test"); got != c.alias {
			t.Errorf("%q: HostKeyAlias %q, want %q", c.conf, got, c.alias)
		}
		said := false
		for _, w := range conf.Warnings("git.example.test") {
			var ce *SSHConfigError
			said = said || errors.As(w, &ce) && ce.Key == "Match" && strings.Contains(w.Error(), "HostKeyAlias")
		}
		if said != c.said {
			t.Errorf("%q: the Match block's HostKeyAlias said not applied: %v, want %v", c.conf, said, c.said)
		}
		if strings.Contains(c.conf, "exec") {
			continue // ssh runs it; the block then applies
		}
		want := "\nhostkeyalias " + c.alias + "\n"
		if c.alias == "" {
			want = "\nhostkeyalias "
		}
		if out, refused, ok := sshG(t, path, "git.example.test"); ok && (refused || strings.Contains(out, want) != (c.alias != "")) {
			t.Errorf("%q: ssh -G reads another HostKeyAlias: the case is wrong\n%s", c.conf, out)
		}
	}
}
