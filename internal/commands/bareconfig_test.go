package commands

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestConfigSaysBareAgreesWithGit holds configSaysBare (init's wording of a
// .git directory that is a bare repository) to stock git's reading of
// core.bare in the same config file.
func TestConfigSaysBareAgreesWithGit(t *testing.T) {
	git, err := exec.LookPath("git")
	if err != nil {
		t.Skip("needs git")
	}
	for _, cfg := range []string{
		"[core]\n\tbare = true\n",
		"[core]\n\tbare = false\n",
		"[core]\nbare=yes\n",
		"[Core]\n\tBare = ON\n",
		"[core]\n\tbare\n",
		"[core]\n\tbare = 1 # a comment\n",
		"[core]\n\tbare = 0 ; a comment\n",
		"[core]\n\trepositoryformatversion = 0\n[remote \"origin\"]\n\tbare = true\n",
		"[core \"x\"]\n\tbare = true\n",
		"[user]\n\tname = bare\n",
		"",
		// session 31's last re-read: the last value wins, a quoted
		// value, a key after the header on its line, a continued value,
		// an integer, a value with a quote inside
		"[core]\n\tbare = true\n\tbare = false\n",
		"[core]\n\tbare = yes\n[core]\n\tbare = no\n",
		"[core]\n\tbare = false\n[CORE]\n\tbare = true\n",
		"[core]\n\tbare = \"true\"\n",
		"[core] bare = true\n",
		"[core]\n\tbare = \\\n true\n",
		"[core]\n\tbare = 2\n",
		"[core]\n\tbare = tr\"ue\"\n",
		"[core]\n\tbare = \"false # x\"\n",
		"[core]\n\tbare = true\r\n",
	} {
		dir := t.TempDir()
		if err := os.WriteFile(filepath.Join(dir, "config"), []byte(cfg), 0o644); err != nil {
			t.Fatal(err)
		}
		out, _ := exec.Command(git, "config", "--file", filepath.Join(dir, "config"), "--type=bool", "core.bare").Output()
		want := strings.TrimSpace(string(out)) == "true"
		if got := configSaysBare(dir); got != want {
			t.Errorf("configSaysBare of %q = %v, git says %v", cfg, got, want)
		}
	}
}
