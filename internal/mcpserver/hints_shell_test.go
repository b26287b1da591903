package mcpserver

import "testing"

// TestForModelShellCommands: the shell commands in the store's hints (rm
// of a lock, chmod of a key, ls -ld of a directory, git fsck) reach a
// model marked as the operator's, as the readproof commands are. The lock
// hint reached it as "run the command again once it is done; ... or remove
// it now: rm /abs/.readproof/refs/.../x.lock": a model with a shell of its
// own (Claude Code's) could take that as its to run, on a lock a live
// writer holds.
func TestForModelShellCommands(t *testing.T) {
	t.Parallel()
	op := " (an operator's command: no tool does this)"
	cases := map[string]string{
		"another git or readproof is writing to the store: run the command again once it is done; if none is (a killed process left the lock), the next write removes it once older than 10s, or remove it now: rm /s/.readproof/refs/heads/readproof/open/x.lock": "another git or readproof is writing to the store: call the tool again once it is done; if none is (a killed process left the lock), the next write removes it once older than 10s, or remove it now: `rm /s/.readproof/refs/heads/readproof/open/x.lock`" + op,
		"if no readproof is running, remove both: rm '/a b/x.lock' /a/y.lock":                  "if no readproof is running, remove both: `rm '/a b/x.lock' /a/y.lock`" + op,
		"receipts key /k/r.key has mode 0644, open to group or others: run chmod 600 /k/r.key": "receipts key /k/r.key has mode 0644, open to group or others: run `chmod 600 /k/r.key`" + op,
		"check its owner and mode (ls -ld '/s/.readproof'), or run readproof as its owner":     "check its owner and mode (`ls -ld '/s/.readproof'`" + op + "), or run readproof as its owner",
		"fix the permissions of the path named above (ls -ld shows its owner and mode)":        "fix the permissions of the path named above (ls -ld shows its owner and mode)",
		"restore it from a backup (`git fsck` on the store lists every damaged object)":        "restore it from a backup (`git fsck`" + op + " on the store lists every damaged object)",
		"the store was modified outside git; run git fsck":                                     "the store was modified outside git; run `git fsck`" + op,
		// an ssh configuration's refusal (gitstore, refusedBy)
		"make it yours and writable by you alone (chmod go-w /h/.ssh/inc.conf)": "make it yours and writable by you alone (`chmod go-w /h/.ssh/inc.conf`" + op + ")",
		"delete a tag: readproof tag rm readproof://demo/a prod":                "delete a tag: the tool readproof_tag_delete (readproof://demo/a prod)",
		"confirm the form, or arm the term /x":                                  "confirm the form, or arm the term /x",
	}
	for in, want := range cases {
		if got := forModel(in); got != want {
			t.Errorf("forModel(%q)\n got %q\nwant %q", in, got, want)
		}
	}
}
