//go:build ignore

// receiptsgen writes a git fast-import stream to stdout that appends N
// receipts, sealed with a receipt key, to one session chain and the 32
// index chains of a new readproof store, as `readproof receipts issue`
// appends them (docs/receipts.md, Storage): one commit per receipt on each
// chain, the receipt's blob at its layout path. It is how
// bench/receiptsmem.sh builds a session of 100,000 receipts in seconds
// instead of one fsynced append each.
//
// With -run R every receipt names run R and no binding (an unbound
// receipt of R, which counts for R's manifest: docs/receipts.md), so that
// `evidence export R` summarises all of them.
//
//	go run bench/receiptsgen.go -key FILE -session S -n N [-run R] | git -C STORE fast-import --quiet --active-branches=33
package main

import (
	"bufio"
	"flag"
	"fmt"
	"os"
	"strconv"
	"time"

	"github.com/readproof/readproof/receipts"
)

func main() {
	keyPath := flag.String("key", "", "the receipt key file")
	session := flag.String("session", "big", "the session")
	n := flag.Int("n", 1000, "how many receipts")
	runID := flag.String("run", "", "the run every receipt names (none: no run)")
	flag.Parse()
	if err := run(*keyPath, *session, *runID, *n); err != nil {
		fmt.Fprintln(os.Stderr, "receiptsgen:", err)
		os.Exit(1)
	}
}

func run(keyPath, session, runID string, n int) error {
	key, err := receipts.LoadKey(keyPath)
	if err != nil {
		return err
	}
	base := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	is := receipts.NewIssuer(key, nil)
	out := bufio.NewWriterSize(os.Stdout, 1<<20)
	sessionRef := receipts.SessionRefPrefix + session
	when := base.Unix()
	for i := 0; i < n; i++ {
		t := base.Add(time.Duration(i) * time.Millisecond)
		r, err := is.Seal(receipts.Call{Session: session, Run: runID, Tool: "tool" + strconv.Itoa(i%7),
			Args: receipts.ArgvArgs([]string{"echo", strconv.Itoa(i)}), Result: receipts.BytesResult([]byte(strconv.Itoa(i))),
			Start: t, End: t})
		if err != nil {
			return err
		}
		blob := r.Encode()
		digits := r.ID[len(receipts.IDPrefix):]
		msg := fmt.Sprintf("receipt %s\n\nsession: %s\ntool: %s\n", r.ID, r.Session, r.Tool)
		fmt.Fprintf(out, "blob\nmark :%d\ndata %d\n%s\n", i+1, len(blob), blob)
		commit := func(ref, msg, path string) {
			fmt.Fprintf(out, "commit %s\ncommitter readproof <readproof@localhost> %d +0000\ndata %d\n%s\n", ref, when, len(msg), msg)
			fmt.Fprintf(out, "M 100644 :%d %s\n\n", i+1, path)
		}
		commit(sessionRef, msg, digits[0:1]+"/"+digits[1:2]+"/"+r.ID+".json")
		iref := receipts.IndexRefPrefix + digits[0:1]
		commit(iref, "index "+msg, digits[1:2]+"/"+digits[2:3]+"/"+r.ID+".json")
		when++
	}
	fmt.Fprintf(out, "done\n")
	return out.Flush()
}
