//go:build ignore

// mkstore writes a git fast-import stream to stdout that appends runs
// run-<first>..run-<first+n-1> to a readproof store: each a manifest commit
// (refs/tags/readproof/runs/<id>) mounting one tiny document (a new version
// every tenth run), recorded on the journal (refs/heads/main), in the
// format of docs/store-format.md. It is how bench/clone.sh builds a store of
// thousands of runs in seconds instead of one CLI process per run.
//
//	go run bench/mkstore.go -first 0 -n 2000 [-from JOURNAL-TIP] | git -C STORE fast-import --quiet
package main

import (
	"bufio"
	"crypto/sha1"
	"crypto/sha256"
	"flag"
	"fmt"
	"os"
	"time"

	"github.com/readproof/readproof/manifest"
)

func main() {
	first := flag.Int("first", 0, "number of the first run")
	n := flag.Int("n", 2000, "how many runs")
	from := flag.String("from", "", "the journal tip to append to (empty: a new journal)")
	flag.Parse()
	out := bufio.NewWriterSize(os.Stdout, 1<<20)
	defer out.Flush()
	when := time.Date(2026, 11, 29, 0, 0, 0, 0, time.UTC)
	head := *from
	mark := 0
	next := func() int { mark++; return mark }
	blobMarks := map[int]int{}
	for i := *first; i < *first+*n; i++ {
		v := i / 10
		content := fmt.Sprintf("tiny document, version %d\n", v)
		if _, ok := blobMarks[v]; !ok {
			blobMarks[v] = next()
			fmt.Fprintf(out, "blob\nmark :%d\ndata %d\n%s\n", blobMarks[v], len(content), content)
		}
		t := when.Add(time.Duration(i) * time.Second)
		m := &manifest.Manifest{Format: manifest.Format, RunID: fmt.Sprintf("run-%07d", i), StartedAt: t, CreatedAt: t,
			Entries: []manifest.Entry{{
				Position: 0, URI: "readproof://bench/doc", Snapshot: blobID(content), ContentHash: contentHash(content),
				SourceRevision: "r", ObservedAt: t, Decision: manifest.DecisionFetch, Bytes: int64(len(content)), ContentType: "text/plain",
			}}}
		manifest.AssignFiles(m.Entries)
		data, err := manifest.Encode(m)
		if err != nil {
			fmt.Fprintln(os.Stderr, "mkstore:", err)
			os.Exit(1)
		}
		msg := manifest.Message(m)
		mm := next()
		stamp := fmt.Sprintf("readproof <readproof@localhost> %d +0000", t.Unix())
		fmt.Fprintf(out, "commit refs/tags/readproof/runs/%s\nmark :%d\ncommitter %s\ndata %d\n%s\n", m.RunID, mm, stamp, len(msg), msg)
		fmt.Fprintf(out, "M 100644 :%d %s\nM 100644 inline manifest.json\ndata %d\n%s\n", blobMarks[v], m.Entries[0].File, len(data), data)
		jm := fmt.Sprintf("record run %s\n\nmanifest :%d\n", m.RunID, mm)
		jmark := next()
		fmt.Fprintf(out, "commit refs/heads/main\nmark :%d\ncommitter %s\ndata %d\n%s\n", jmark, stamp, len(jm), jm)
		if head != "" {
			fmt.Fprintf(out, "from %s\n", head)
		}
		fmt.Fprintf(out, "merge :%d\ndeleteall\n\n", mm)
		head = fmt.Sprintf(":%d", jmark)
	}
}

func blobID(s string) string {
	h := sha1.New()
	fmt.Fprintf(h, "blob %d\x00", len(s))
	h.Write([]byte(s))
	return fmt.Sprintf("%x", h.Sum(nil))
}

func contentHash(s string) string { return fmt.Sprintf("sha256:%x", sha256.Sum256([]byte(s))) }
