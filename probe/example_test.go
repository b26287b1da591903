package probe_test

import (
	"context"
	"crypto/sha256"
	"fmt"
	"net"
	"os"
	"time"

	"github.com/readproof/readproof/probe"
)

// The offline path as `run mount --probe` and `probe check` use it.
func Example_offlineRun() {
	master := sha256.Sum256([]byte("example only: real keys come from LoadKeys"))
	keys, _ := probe.DeriveKeys(master[:])
	mounted := time.Date(2026, 9, 15, 13, 9, 37, 0, time.UTC)

	// run mount --probe: one session per probed entry; record iss and the
	// two hashes, deliver the bytes, forget the sentinel.
	content := []byte("Products can be refunded within 30 days.\n")
	session, _ := probe.EntrySession("nightly-42", 0)
	iss, sentinel, _ := keys.Issue(session, mounted, 0)
	delivered := probe.AppendProbeLine(content, sentinel)
	ch, dh := sha256.Sum256(content), sha256.Sum256(delivered)
	fmt.Printf("record: %+v content=sha256:%x… delivered=sha256:%x…\n", iss, ch[:4], dh[:4])

	// probe check: recompute, confirm the record, judge the answer.
	again, _ := keys.Deliver(content, iss)
	fmt.Println("delivered hash confirmed:", sha256.Sum256(again) == sha256.Sum256(delivered))
	answer := "Refunds within 30 days. Probe value: " + sentinel
	for _, when := range []time.Duration{time.Minute, 3 * time.Hour, 25 * time.Hour} {
		res, _ := keys.CheckAnswer([]probe.Issued{iss}, answer, mounted.Add(when), probe.AnswerOptions{})
		fmt.Println(when, res[0].Verdict)
	}
	res, _ := keys.CheckAnswer([]probe.Issued{iss}, "I read it, honest.", mounted.Add(time.Minute), probe.AnswerOptions{})
	fmt.Println("no value:", res[0].Verdict, "-", res[0].Reason)
	// Output:
	// record: {Session:nightly-42.0 Bucket:5964925 Length:16} content=sha256:c8b0bb21… delivered=sha256:1b7618de…
	// delivered hash confirmed: true
	// 1m0s READ_VERIFIED
	// 3h0m0s READ_STALE
	// 25h0m0s HALLUCINATED
	// no value: HALLUCINATED - the answer contains no sentinel-shaped value
}

// The probe server as `readproof probe serve` runs it.
func ExampleServer_Serve() {
	srv, err := probe.NewServer(probe.ServerOptions{Audit: os.Stderr}) // process-scoped secret
	if err != nil {
		panic(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		panic(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()                        // a real caller cancels on SIGINT/SIGTERM
	fmt.Println(srv.Serve(ctx, ln)) // returns after a graceful shutdown
	// Output: <nil>
}
