package receipts

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/readproof/readproof/gitstore/gitobj"
)

// FuzzCheckAppendBinding: the check pull, clone and the guarded remote
// make of a fetched receipt chain's commit (its message, and the blob its
// tree holds where the first line's receipt belongs) never panics, and
// fails exactly when that blob decodes as the receipt the first line names
// and CheckBindingLine fails it, with ErrBindingEdited: a message or a blob
// that names nothing, or another receipt, is left to the chain's other
// checks. AppendMessage agrees on which messages name a receipt: exactly a
// first line `receipt ID` on a session chain and `index receipt ID` on an
// index chain, ID a well-formed receipt id, whatever follows the first
// line; never a bare id, nor the other chain's prefix.
func FuzzCheckAppendBinding(f *testing.F) {
	key, seed := fuzzSeeds(f)
	bound := seed
	bound.Format, bound.Bound = BoundVersion, Binding{Manifest: manifestA}
	bound, err := key.Seal(bound)
	if err != nil {
		f.Fatal(err)
	}
	msg := appendMessage(bound, bound.Bound)
	f.Add(msg, bound.Encode(), false, false)
	f.Add("index "+msg, bound.Encode(), true, false)
	f.Add(strings.Replace(msg, manifestA, manifestB, 1), bound.Encode(), false, false)
	f.Add("index "+strings.Replace(msg, "run-manifest: "+manifestA+"\n", "", 1), bound.Encode(), true, false)
	f.Add(msg, bound.Encode(), false, true)
	f.Add(msg+"run-started: 2026-11-29T19:59:00.5Z\n", seed.Encode(), false, false)
	f.Add("receipt rcpt_\n", []byte("{}"), false, false)
	// a bare id names no receipt, as AppendMessage says: its binding line
	// is not checked here (pull refuses the commit as naming none)
	f.Add(strings.Replace(strings.TrimPrefix(msg, "receipt "), manifestA, manifestB, 1), bound.Encode(), false, false)
	f.Add("index "+strings.Replace(strings.TrimPrefix(msg, "receipt "), manifestA, manifestB, 1), bound.Encode(), true, false)
	// what AppendMessage reads of a message alone: the first line, with
	// the session or the index chain's prefix, or another
	f.Add("receipt rcpt_0123456789abcdefghjkmnpqrstvwxyz\n\nsession: s\n", []byte(nil), false, false)
	f.Add("index receipt rcpt_0123456789abcdefghjkmnpqrstvwxyz\n", []byte(nil), true, false)
	f.Add("edited receipt rcpt_0123456789abcdefghjkmnpqrstvwxyz\n", []byte(nil), false, false)
	f.Add("merge receipts of s\n", []byte(nil), false, false)
	f.Fuzz(func(t *testing.T, msg string, data []byte, index, elsewhere bool) {
		ref, prefix, path := SessionRef("s"), "receipt ", sessionPath
		if index {
			ref, prefix, path = IndexRefPrefix+"0", "index receipt ", indexPath
		}
		line, _, _ := strings.Cut(msg, "\n")
		id, named := strings.CutPrefix(line, prefix)
		named = named && ValidID(id)
		if AppendMessage(ref, msg) != named {
			t.Fatalf("AppendMessage(%q, %q) = %v, want %v", ref, msg, !named, named)
		}
		if !named {
			id = seed.ID
		}
		// the tree holds data where the receipt id belongs (or, when
		// elsewhere, under another name)
		trees := map[gitobj.OID][]gitobj.TreeEntry{}
		p := path(id)
		if elsewhere {
			p[2] = "x" + p[2]
		}
		for i := range p {
			next := gitobj.OID(fmt.Sprintf("t%d", i+1))
			if i == len(p)-1 {
				next = "blob"
			}
			trees[gitobj.OID(fmt.Sprintf("t%d", i))] = []gitobj.TreeEntry{{Name: p[i], OID: next}}
		}
		list := func(o gitobj.OID) ([]gitobj.TreeEntry, error) {
			if e, ok := trees[o]; ok {
				return e, nil
			}
			return nil, fmt.Errorf("no tree %s", o)
		}
		blob := func(o gitobj.OID) ([]byte, error) {
			if o != "blob" {
				return nil, fmt.Errorf("no blob %s", o)
			}
			return data, nil
		}
		err := CheckAppendBinding(list, blob, ref, "t0", msg)
		var want error
		if r, derr := DecodeReceipt(data); named && !elsewhere && derr == nil && r.ID == id {
			want = CheckBindingLine(r, ref, msg)
		}
		if (err == nil) != (want == nil) || err != nil && err.Error() != want.Error() {
			t.Fatalf("message %q, blob %q: %v, want %v", msg, data, err, want)
		}
		if err != nil && (!errors.Is(err, ErrBindingEdited) || !errors.Is(err, ErrTampered)) {
			t.Fatalf("error %v is not ErrBindingEdited", err)
		}
	})
}
