package share

import (
	"fmt"
	"testing"
)

// BenchmarkPull1000Receipts: a pull that takes 1,000 receipts (ten
// sessions of 100, so ten session chains and the index chains) into a
// store that has none: each iteration is a fresh store and one pull, which
// checks the chains' tips and every new commit against its parents.
func BenchmarkPull1000Receipts(b *testing.B) {
	key := testKey(b)
	srvDir := bareServer(b, b.TempDir(), "shared.git")
	a := newProject(b, map[string]string{"policy": "p\n"})
	addRemote(b, a, "origin", srvDir)
	for s := 0; s < 10; s++ {
		issue(b, a, key, fmt.Sprintf("s%d", s), 100)
	}
	mustPush(b, a, "origin")
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		p := newProject(b, map[string]string{"runbook": "r\n"})
		addRemote(b, p, "origin", srvDir)
		b.StartTimer()
		if res := mustPull(b, p, "origin"); len(res.Receipts) != 10+32 && len(res.Receipts) < 11 {
			b.Fatalf("pull took receipt chains %v", res.Receipts)
		}
	}
}
