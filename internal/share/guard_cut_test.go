package share

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/readproof/readproof/gitstore"
	"github.com/readproof/readproof/internal/store"
)

// TestJournalShapeCutsOnACharacter: the first line of a commit that is
// not a journal record is quoted cut to 60 bytes; a character across the
// cut is left out whole, not shown as a broken byte ("\xc3").
func TestJournalShapeCutsOnACharacter(t *testing.T) {
	msg := strings.Repeat("a", 59) + "é and more\n"
	err := journalShape(gitstore.Commit{Tree: store.EmptyTree, Message: msg})
	if err == nil {
		t.Fatal("journalShape accepted a commit that is no journal record")
	}
	if got := err.Error(); strings.Contains(got, `\x`) || !utf8.ValidString(got) || !strings.Contains(got, strings.Repeat("a", 59)+`…"`) {
		t.Errorf("journalShape error = %s, want the line cut before é", got)
	}
}
