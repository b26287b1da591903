package mcpserver

import (
	"context"
	"strconv"
	"testing"

	"github.com/readproof/readproof/gitstore"
	"github.com/readproof/readproof/gitstore/gitobj"
	"github.com/readproof/readproof/receipts"
)

// blobCounter counts the blobs read through it.
type blobCounter struct {
	gitobj.Store
	blobs int
}

func (c *blobCounter) Blob(id gitobj.OID) ([]byte, error) {
	c.blobs++
	return c.Store.Blob(id)
}

func (c *blobCounter) BlobAtMost(id gitobj.OID, max int64) ([]byte, error) {
	c.blobs++
	return c.Store.BlobAtMost(id, max)
}

// TestOwnClaimsReadsTheSessionOnce: a read token's verify_claims reads each
// receipt of the session once, its caller's and the others alike (the
// others are read, to find its own, but not judged). Before session 30 it
// read the session's chain twice, once to find its caller's receipts and
// once to check them: two blob reads a receipt.
func TestOwnClaimsReadsTheSessionOnce(t *testing.T) {
	t.Parallel()
	store := gitstore.NewTestStore(t)
	key, err := receipts.NewKey([]byte("0123456789abcdef0123456789abcdef"))
	if err != nil {
		t.Fatal(err)
	}
	is := receipts.NewIssuer(key, receipts.NewLedger(store))
	const n = 30
	var own []string
	for i := range 2 * n {
		caller := "alice"
		if i%2 == 0 {
			caller = "bob"
		}
		r, err := is.Issue(context.Background(), receipts.Call{Session: "s", Tool: "t" + strconv.Itoa(i), Caller: caller,
			Args: receipts.ArgvArgs([]string{"t"}), Result: receipts.BytesResult([]byte("r"))})
		if err != nil {
			t.Fatal(err)
		}
		if caller == "bob" {
			own = append(own, r.ID)
		}
	}
	counter := &blobCounter{Store: store}
	rep, err := ownClaims(receipts.NewLedger(counter), key, "s", own[:n/2], "bob")
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Claims) != n/2 || rep.Count(receipts.Valid) != n/2 || len(rep.Omitted) != n-n/2 {
		t.Fatalf("claims %d (%d valid), omitted %d: want %d valid and %d omitted", len(rep.Claims), rep.Count(receipts.Valid), len(rep.Omitted), n/2, n-n/2)
	}
	if counter.blobs != 2*n {
		t.Errorf("a session of %d receipts: %d blobs read, want each once", 2*n, counter.blobs)
	}
}
