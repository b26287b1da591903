package storecheck_test

import (
	"bytes"
	"context"
	"fmt"
	"testing"

	"github.com/readproof/readproof/internal/storecheck"
	"github.com/readproof/readproof/receipts"
)

// BenchmarkVerify1000Receipts: verify of a store holding 1,000 receipts
// (ten sessions of 100): every commit of every receipt chain is checked
// against its parents, on the trees the walk read.
func BenchmarkVerify1000Receipts(b *testing.B) {
	p := newProject(b, twoDocs, "")
	key, err := receipts.NewKey(bytes.Repeat([]byte{5}, 32))
	if err != nil {
		b.Fatal(err)
	}
	iss := receipts.NewIssuer(key, receipts.NewLedger(p.s.Git()))
	for i := 0; i < 1000; i++ {
		if _, err := iss.Issue(context.Background(), receipts.Call{Session: fmt.Sprintf("s%d", i%10), Tool: "exec",
			Args: receipts.ArgvArgs([]string{"true", fmt.Sprint(i)}), Result: receipts.BytesResult([]byte("ok"))}); err != nil {
			b.Fatal(err)
		}
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if rep := p.check(b, storecheck.Options{}); !rep.OK() {
			b.Fatalf("healthy store:\n%s", problems(rep))
		}
	}
}
