package gitstore

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A configuration line whose keyword is long (an unknown keyword, or one
// with nothing after it) is refused with a message that quotes at most
// the first bytes of the keyword, its control bytes escaped, and names the
// line, as ssh refuses it:
//
//	printf 'Host *\n  %s yes\n' "$(head -c 5000 /dev/zero | tr '\0' x)" >cfg; ssh -G -F cfg h   # Bad configuration option: xxx…
//
// Before, the keyword was repeated in full, three times for an unknown
// one.
func TestSSHLongKeywordQuotedShort(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	if err := os.Mkdir(filepath.Join(home, ".ssh"), 0o700); err != nil {
		t.Fatal(err)
	}
	long := strings.Repeat("x", 5000) + "\x1b[2J"
	for _, conf := range []string{
		"Host *\n  " + long + " yes\n",
		"Host *\n  " + long + "\n",
	} {
		config := writeSSHConfig(t, home, conf)
		err := readSSHConfigs(filepath.Join(home, "no-system-config")).Check("git.example.test")
		if err == nil {
			t.Errorf("%.20q: Check passed, want a refusal", conf)
			continue
		}
		msg := err.Error()
		if len(msg) > 2000 || strings.Contains(msg, strings.Repeat("x", 65)) || strings.Contains(msg, "\x1b") || !strings.Contains(msg, "line 2") {
			t.Errorf("%.20q: Check: %d bytes, want the keyword cut short, no escape byte, and line 2 named:\n%.600s", conf, len(msg), msg)
		}
		if out, refused, ok := sshG(t, config, "git.example.test"); ok && !refused {
			t.Errorf("%.20q: ssh -G does not refuse it:\n%.300s", conf, out)
		}
	}
}
