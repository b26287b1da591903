package receipts

import (
	"context"
	"strconv"
	"testing"
)

// BenchmarkIssue measures receipts issued per second, each sealed and made
// durable in a real store (both refs moved, objects fsynced).
func BenchmarkIssue(b *testing.B) {
	f := newFixture(b)
	call := Call{Session: "bench", Tool: "exec", Args: ArgvArgs([]string{"go", "test"}), Result: CommandResult([]byte("ok\n"), nil, 0, "")}
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		if _, err := f.issuer.Issue(context.Background(), call); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "receipts/s")
}

// BenchmarkIssueNoStore measures sealing alone (id, MAC) without the store.
func BenchmarkIssueNoStore(b *testing.B) {
	is := NewIssuer(testKey(b, 1), nil)
	call := Call{Session: "bench", Tool: "exec", Args: ArgvArgs([]string{"go", "test"}), Result: BytesResult(nil)}
	for b.Loop() {
		if _, err := is.Seal(call); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkMAC(b *testing.B) {
	key := testKey(b, 1)
	r := sampleReceipt(b, key)
	b.ReportAllocs()
	for b.Loop() {
		if err := Verify(r, key); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkList measures listing a session of 500 receipts.
func BenchmarkList(b *testing.B) {
	f := newFixture(b)
	for i := 0; i < 500; i++ {
		f.issue(b, "s", "t"+strconv.Itoa(i))
	}
	for b.Loop() {
		rs, err := f.ledger.List("s")
		if err != nil || len(rs) != 500 {
			b.Fatal(len(rs), err)
		}
	}
}

// BenchmarkGet measures a lookup by id alone in a store of 500 receipts.
func BenchmarkGet(b *testing.B) {
	f := newFixture(b)
	var last Receipt
	for i := 0; i < 500; i++ {
		last = f.issue(b, "s"+strconv.Itoa(i%10), "t")
	}
	for b.Loop() {
		if _, err := f.ledger.Get(last.ID); err != nil {
			b.Fatal(err)
		}
	}
}
