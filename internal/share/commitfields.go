package share

import (
	"strings"

	"github.com/readproof/readproof/gitstore"
)

// commitFields returns the tree, the parents and the message of commit id
// (the rest of the returned Commit is empty), as g.Commit would decode them,
// without decoding the signatures: verification reads every journal and
// manifest commit of a clone, and the decoder was 40% of each read. A
// commit in git's canonical form (what git writes, and what fsck, which
// every fetch runs, accepts) is parsed here; anything else (another object
// type, a header line the decoder would read differently, a read error)
// goes through g.Commit, so its fields and its error are g.Commit's.
//
// An object over maxCommitBytes is refused from its header, unread: every
// walk of a pull or clone (the journal, a chain, the commits new on either)
// reads the remote's commits here, and a message of hundreds of megabytes
// is a few on the wire.
func commitFields(g gitstore.Reader, id gitstore.OID) (gitstore.Commit, error) {
	if err := gitstore.CheckObjectSize(g, id, maxCommitBytes); err != nil {
		return gitstore.Commit{}, err
	}
	kind, raw, err := g.RawObject(id)
	if err != nil || kind != "commit" {
		return g.Commit(id)
	}
	if c, ok := parseCanonicalCommit(raw); ok {
		return c, nil
	}
	return g.Commit(id)
}

// parseCanonicalCommit parses "tree <id>\n", "parent <id>\n"..., more header
// lines, a blank line and the message, with lowercase hex ids. It refuses
// (false) anything where the decoder (go-git's Commit.Decode, which trims
// each header line and starts the message at the first line that trims to
// nothing) could read another tree, other parents or another message: no
// blank line, a header line that trims to nothing, or a later header line
// that trims to a tree or parent header.
func parseCanonicalCommit(raw []byte) (gitstore.Commit, bool) {
	var c gitstore.Commit
	s := string(raw)
	head, msg, ok := strings.Cut(s, "\n\n")
	if !ok {
		return c, false
	}
	lines := strings.Split(head, "\n")
	id, ok := strings.CutPrefix(lines[0], "tree ")
	if !ok || !lowerHexID(id) {
		return c, false
	}
	c.Tree = gitstore.OID(id)
	i := 1
	for ; i < len(lines); i++ {
		p, ok := strings.CutPrefix(lines[i], "parent ")
		if !ok {
			break
		}
		if !lowerHexID(p) {
			return c, false
		}
		c.Parents = append(c.Parents, gitstore.OID(p))
	}
	for ; i < len(lines); i++ {
		t := strings.TrimSpace(lines[i])
		if t == "" || strings.HasPrefix(t, "tree ") || strings.HasPrefix(t, "parent ") || t == "tree" || t == "parent" {
			return c, false
		}
	}
	c.Message = msg
	return c, true
}

func lowerHexID(s string) bool {
	if len(s) != 40 {
		return false
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}
