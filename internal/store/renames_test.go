package store

import (
	"slices"
	"strings"
	"testing"

	"github.com/readproof/readproof/gitstore"
	"github.com/readproof/readproof/identity"
)

// FuzzJournalRename: ParseJournalRename reads back what JournalRenameMessage
// writes, and of any other message accepts only well-formed run ids and
// manifest ids.
func FuzzJournalRename(f *testing.F) {
	m := strings.Repeat("ab", 20)
	f.Add("x", "x-new", m, JournalRenameMessage("x", "x-new", gitstore.OID(m)))
	f.Add("r1", "r2", m, "rename run r1 to r2\n\nmanifest "+m+"\nmanifest "+strings.Repeat("cd", 20)+"\n")
	f.Add("a b", "c", "zz", "rename run a b to c\n\nmanifest zz\n")
	f.Add("r1", "r2", m, "rename run r1 to \n\nmanifest "+m)
	f.Add("r1", "r2", m, "record run r1\n\nmanifest "+m+"\n")
	f.Fuzz(func(t *testing.T, from, to, mid, msg string) {
		if identity.ValidateRunID(from) == nil && identity.ValidateRunID(to) == nil && identity.IsObjectID(mid) {
			f2, t2, ms, ok := ParseJournalRename(JournalRenameMessage(from, to, gitstore.OID(mid)))
			if !ok || f2 != from || t2 != to || !slices.Equal(ms, []gitstore.OID{gitstore.OID(mid)}) {
				t.Fatalf("round trip of %q %q %q: %q %q %v %v", from, to, mid, f2, t2, ms, ok)
			}
		}
		f2, t2, ms, ok := ParseJournalRename(msg)
		if !ok {
			if f2 != "" || t2 != "" || ms != nil {
				t.Fatalf("refused %q but returned %q %q %v", msg, f2, t2, ms)
			}
			return
		}
		if !strings.HasPrefix(msg, journalRenamePrefix) || identity.ValidateRunID(f2) != nil || identity.ValidateRunID(t2) != nil {
			t.Fatalf("accepted %q: from %q to %q", msg, f2, t2)
		}
		for _, x := range ms {
			if !identity.IsObjectID(string(x)) || !strings.Contains(msg, "\nmanifest "+string(x)) {
				t.Fatalf("accepted %q: manifest %q", msg, x)
			}
		}
	})
}
