package mcpserver

import (
	"strings"
	"testing"
)

// testPaths are a server's paths as newServerPaths orders them, without
// reading the file system (the test's home is not /home/alice).
var testPaths = serverPaths{
	{"/home/alice/proj/readproof.toml", "<policy>"},
	{"/home/alice/proj/.readproof", "<store>"},
	{"/home/alice", "~"},
}

// TestHidePaths: the store's directory is <store>, the policy file
// <policy>, the home ~, and any other absolute path its base name, in the
// places a message puts a path; what is not a path stays.
func TestHidePaths(t *testing.T) {
	for in, want := range map[string]string{
		"open /home/alice/proj/.readproof/refs/heads/x.lock: file exists":                "open <store>/refs/heads/x.lock: file exists",
		"policy file /home/alice/proj/readproof.toml: line 3: bad key":                   "policy file <policy>: line 3: bad key",
		"probe key /home/alice/.config/readproof/probe.key: not 32 bytes":                "probe key ~/.config/readproof/probe.key: not 32 bytes",
		"read /srv/data/docs/refunds.md: permission denied":                              "read refunds.md: permission denied",
		"remove it now: `rm /home/alice/proj/.readproof/x.lock` (an operator's command)": "remove it now: `rm <store>/x.lock` (an operator's command)",
		`stat "/etc/readproof/keys/signing.pem"`:                                         `stat "signing.pem"`,
		"the key file (/var/lib/rp/k.key).":                                              "the key file (k.key).",
		"in /opt/x.":                                                                     "in x.",
		"key=/opt/y/z.pem, next":                                                         "key=z.pem, next",
		"/home/alice/proj/.readproof2/x is not the store":                                "~/proj/.readproof2/x is not the store",
		"/home/alicex/y":                                  "y",
		"readproof://demo/policies/refunds@prod":          "readproof://demo/policies/refunds@prod",
		"https://example.com/a/b and file:///c/d":         "https://example.com/a/b and file:///c/d",
		"relative policies/refunds.md and and/or, a / b":  "relative policies/refunds.md and and/or, a / b",
		"the root / and /. and /..":                       "the root / and /. and /..",
		"the home /home/alice.":                           "the home ~.",
		"the store /home/alice/proj/.readproof...":        "the store <store>...",
		"not the home: /home/alice.old/x":                 "not the home: x",
		"no path at all":                                  "no path at all",
		"<store>/objects/ab and ~/x, hidden twice":        "<store>/objects/ab and ~/x, hidden twice",
		"two: /home/alice/proj/.readproof;/tmp/t1/a.lock": "two: <store>;a.lock",
	} {
		if got := testPaths.hide(in); got != want {
			t.Errorf("hide(%q)\n got %q\nwant %q", in, got, want)
		}
	}
}

// FuzzHidePaths: whatever the text, the store's, the policy's and the
// home's absolute paths do not survive as whole paths, and hiding twice
// changes nothing more.
func FuzzHidePaths(f *testing.F) {
	for _, s := range []string{"open /home/alice/proj/.readproof/x.lock: exists", "(/home/alice)", "a /b/c.", "\"/x\" '/y'", "~/z <store>/q"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got := testPaths.hide(s)
		if again := testPaths.hide(got); again != got {
			t.Fatalf("hide is not stable: %q -> %q -> %q", s, got, again)
		}
		for _, p := range testPaths {
			if i := strings.Index(got, p.path); i >= 0 && replacePath(got, p.path, p.name) != got {
				t.Fatalf("hide(%q) = %q keeps %s", s, got, p.path)
			}
		}
	})
}
