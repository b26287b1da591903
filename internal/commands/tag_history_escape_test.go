package commands

import (
	"bytes"
	"testing"
	"unicode"

	"github.com/readproof/readproof/internal/store"
)

// TestTagHistoryEscapesMove: a tag move pulled from a remote carries
// tag.json as the remote wrote it (pull checks the snapshot, not the
// action or the notes): `tag history` shows each field escaped, so none
// reaches the terminal as a control sequence.
func TestTagHistoryEscapesMove(t *testing.T) {
	var b bytes.Buffer
	e := &env{out: &b}
	h := []historyEntry{{
		TagState: store.TagState{URI: "readproof://demo/policy", Tag: "prod", Action: "set\x1b[41m",
			Caller: "mallory\x1b]0;owned\a", From: "a\u202eb", Proposal: "p\x1b[31m"},
		Commit: "ffbdf38fa235ffbdf38fa235ffbdf38fa235ffbd", Pending: true, Remote: "o\u202er",
	}}
	if err := printTagHistory(e, h); err != nil {
		t.Fatal(err)
	}
	for _, r := range b.String() {
		if !unicode.IsPrint(r) && r != '\n' && r != ' ' {
			t.Fatalf("tag history carries %U:\n%q", r, b.String())
		}
	}
}
