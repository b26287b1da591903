package gitstore

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/readproof/readproof/internal/hint"
)

// A keyword ssh takes and does nothing with, saying so ("Unsupported
// option": CompressionLevel, RSAAuthentication), in any block of the file
// or of a file it includes, is said as a warning naming the file and
// line, the same for every host (so said once however many sources read
// it), and the fetch goes on, as ssh's does. Before, it was taken in
// silence, and RSAAuthentication, missing from the list, refused the
// configuration as a keyword ssh does not know. Checked against ssh -G
// when ssh is there, and so is the list of such keywords.
func TestSSHUnsupportedKeywordsWarned(t *testing.T) {
	home := sshHome(t)
	inc := filepath.Join(home, ".ssh", "inc.conf")
	if err := os.WriteFile(inc, []byte("# old\nRSAAuthentication no\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	config := writeSSHConfig(t, home, "Host other.example.test\n  CompressionLevel 6\nHost *\n  Include inc.conf\n  Port 2200\n")
	conf := ReadSSHConfig()
	if err := conf.Check("git.example.test"); err != nil {
		t.Fatalf("Check: %v", err)
	}
	said := func(alias string) []string {
		var out []string
		for _, w := range conf.Warnings(alias) {
			var ce *SSHConfigError
			if !errors.As(w, &ce) {
				t.Fatalf("warning %v is no *SSHConfigError", w)
			}
			out = append(out, fmt.Sprintf("%s:%d: %v (hint: %s)", ce.File, ce.Line, w, hint.Of(w)))
		}
		return out
	}
	got := said("git.example.test")
	if len(got) != 2 || !strings.HasPrefix(got[0], config+":2: ") || !strings.Contains(got[0], `Unsupported option "compressionlevel"`) ||
		!strings.HasPrefix(got[1], inc+":2: ") || !strings.Contains(got[1], `Unsupported option "rsaauthentication"`) || !strings.Contains(got[1], "remove the line") {
		t.Errorf("warnings %q, want CompressionLevel's (%s line 2) then RSAAuthentication's (%s line 2), with a hint", got, config, inc)
	}
	if other := said("other.example.test"); strings.Join(other, "\n") != strings.Join(got, "\n") {
		t.Errorf("warnings for another host %q, want the same %q", other, got)
	}
	out, refused, ok := sshG(t, config, "git.example.test")
	if !ok {
		return
	}
	if refused || !strings.Contains(out, config+` line 2: Unsupported option "compressionlevel"`) || !strings.Contains(out, inc+` line 2: Unsupported option "rsaauthentication"`) || !strings.Contains(out, "\nport 2200\n") {
		t.Errorf("ssh -G does not agree: the case is wrong\n%s", out)
	}
	if v, _ := exec.Command("ssh", "-V").CombinedOutput(); !strings.Contains(string(v), "OpenSSH_9.2") {
		return
	}
	for low, info := range sshKeywords() {
		if err := os.WriteFile(config, []byte(info.name+" x\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		out, _, _ := sshG(t, config, "h.example.test")
		if strings.Contains(out, `Unsupported option "`+low+`"`) != (info.kind == sshKeywordUnsupported) {
			t.Errorf("%s: listed as unsupported %v; ssh -G says\n%s", info.name, info.kind == sshKeywordUnsupported, out)
		}
	}
}
