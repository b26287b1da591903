package share

import (
	"bytes"
	"context"
	"crypto/sha1"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/readproof/readproof/gitstore"
	"github.com/readproof/readproof/internal/store"
	"github.com/readproof/readproof/manifest"
)

// importRuns appends runs run-<first>..run-<first+n-1> to the repository at
// gitDir with git fast-import: each a manifest commit mounting one tiny
// document (a new version every tenth run) in readproof's format, recorded
// on the journal (refs/heads/main). It is the fast way to build a store of
// 10,000 runs; the objects are the ones readproof would write.
func importRuns(tb testing.TB, gitDir string, first, n int) {
	tb.Helper()
	var in bytes.Buffer
	when := time.Date(2026, 11, 29, 0, 0, 0, 0, time.UTC)
	head := ""
	if out, err := gitstore.GitCommand(tb, gitDir, "rev-parse", "--verify", "-q", "refs/heads/main").Output(); err == nil {
		head = strings.TrimSpace(string(out))
	}
	mark := 0
	next := func() int { mark++; return mark }
	blobMarks := map[int]int{}
	for i := first; i < first+n; i++ {
		v := i / 10
		content := fmt.Sprintf("tiny document, version %d\n", v)
		if _, ok := blobMarks[v]; !ok {
			blobMarks[v] = next()
			fmt.Fprintf(&in, "blob\nmark :%d\ndata %d\n%s\n", blobMarks[v], len(content), content)
		}
		t := when.Add(time.Duration(i) * time.Second)
		m := &manifest.Manifest{Format: manifest.Format, RunID: fmt.Sprintf("run-%05d", i), StartedAt: t, CreatedAt: t,
			Entries: []manifest.Entry{{
				Position: 0, URI: "readproof://bench/doc", Snapshot: blobID([]byte(content)), ContentHash: contentHash([]byte(content)),
				SourceRevision: "r", ObservedAt: t, Decision: manifest.DecisionFetch, Bytes: int64(len(content)), ContentType: "text/plain",
			}}}
		manifest.AssignFiles(m.Entries)
		data, err := manifest.Encode(m)
		if err != nil {
			tb.Fatal(err)
		}
		msg := manifest.Message(m)
		mm := next()
		stamp := fmt.Sprintf("readproof <readproof@localhost> %d +0000", t.Unix())
		fmt.Fprintf(&in, "commit %s%s\nmark :%d\ncommitter %s\ndata %d\n%s\n", store.RunsPrefix, m.RunID, mm, stamp, len(msg), msg)
		fmt.Fprintf(&in, "M 100644 :%d %s\nM 100644 inline manifest.json\ndata %d\n%s\n", blobMarks[v], m.Entries[0].File, len(data), data)
		jm := fmt.Sprintf("record run %s\n\nmanifest :%d\n", m.RunID, mm)
		jmark := next()
		fmt.Fprintf(&in, "commit refs/heads/main\nmark :%d\ncommitter %s\ndata %d\n%s\n", jmark, stamp, len(jm), jm)
		if head != "" {
			fmt.Fprintf(&in, "from %s\n", head)
		}
		fmt.Fprintf(&in, "merge :%d\ndeleteall\n\n", mm)
		head = fmt.Sprintf(":%d", jmark)
	}
	cmd := gitstore.GitCommand(tb, gitDir, "fast-import", "--quiet", "--force")
	cmd.Stdin = &in
	if out, err := cmd.CombinedOutput(); err != nil {
		tb.Fatalf("fast-import: %v\n%s", err, out)
	}
}

// blobID is the git id of a blob with these bytes.
func blobID(b []byte) string {
	h := sha1.New()
	fmt.Fprintf(h, "blob %d\x00", len(b))
	h.Write(b)
	return fmt.Sprintf("%x", h.Sum(nil))
}

// TestImportRunsIsAStore checks the benchmark's generator: what it writes
// replays and syncs like runs recorded by readproof.
func TestImportRunsIsAStore(t *testing.T) {
	t.Parallel()
	needGit(t)
	base := t.TempDir()
	dir := bareServer(t, base, "s.git")
	importRuns(t, dir, 0, 25)
	dst := filepath.Join(t.TempDir(), "clone")
	res, err := Clone(context.Background(), dir, dst, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.NewRuns) != 25 || res.Verified != 25 {
		t.Fatalf("clone: %d runs, %d verified", len(res.NewRuns), res.Verified)
	}
	s, err := store.Open(dst, nil, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	replayAll(t, s)
	gitstore.Fsck(t, dst)
}

// BenchmarkPullNothingNew10kRuns: `pull` when the remote has nothing new,
// on a store of 10,000 runs (target: under 0.5 s). Each iteration is a
// whole pull: open the store, ask the remote for its refs, read and compare
// every shared ref; nothing is cached between iterations. "packed" is the
// store as Clone leaves it (refs in packed-refs); "loose" has every ref in
// its own file, as readproof writes them before a gc. The server keeps its
// refs packed, as git hosting does.
func BenchmarkPullNothingNew10kRuns(b *testing.B) {
	needGit(b)
	base := b.TempDir()
	dir := bareServer(b, base, "shared.git")
	importRuns(b, dir, 0, 10000)
	gitstore.GitCommand(b, dir, "gc", "--quiet").Run()
	d := startDaemon(b, base)
	packed := filepath.Join(b.TempDir(), "packed")
	start := time.Now()
	res, err := Clone(context.Background(), dir, packed, Options{})
	if err != nil {
		b.Fatal(err)
	}
	b.Logf("clone of %d runs: %v", len(res.NewRuns), time.Since(start).Round(time.Millisecond))
	loose := filepath.Join(b.TempDir(), "loose")
	if out, err := exec.Command("cp", "-a", packed, loose).CombinedOutput(); err != nil {
		b.Fatalf("copy: %v %s", err, out)
	}
	unpackRefs(b, loose)
	for _, st := range []string{packed, loose} {
		s, err := store.Open(st, nil, store.Options{})
		if err != nil {
			b.Fatal(err)
		}
		if err := AddRemote(context.Background(), s, "daemon", d.url("shared.git")); err != nil {
			b.Fatal(err)
		}
		s.Close()
	}
	for _, c := range []struct{ name, store, remote string }{
		{"path/packed", packed, "origin"}, {"path/loose", loose, "origin"},
		{"daemon/packed", packed, "daemon"}, {"daemon/loose", loose, "daemon"},
	} {
		b.Run(c.name, func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				s, err := store.Open(c.store, nil, store.Options{})
				if err != nil {
					b.Fatal(err)
				}
				res, err := Pull(context.Background(), s, c.remote, Options{})
				s.Close()
				if err != nil {
					b.Fatal(err)
				}
				if !res.UpToDate {
					b.Fatalf("pull found something new: %+v", res)
				}
			}
		})
	}
}

// unpackRefs rewrites every packed ref of a repository as a loose ref file.
func unpackRefs(tb testing.TB, gitDir string) {
	tb.Helper()
	data, err := os.ReadFile(filepath.Join(gitDir, "packed-refs"))
	if err != nil {
		tb.Fatal(err)
	}
	for _, line := range strings.Split(string(data), "\n") {
		oid, name, ok := strings.Cut(line, " ")
		if !ok || strings.HasPrefix(line, "#") || strings.HasPrefix(line, "^") {
			continue
		}
		p := filepath.Join(gitDir, filepath.FromSlash(name))
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(oid+"\n"), 0o644); err != nil {
			tb.Fatal(err)
		}
	}
	if err := os.Remove(filepath.Join(gitDir, "packed-refs")); err != nil {
		tb.Fatal(err)
	}
}

// BenchmarkPush1000Runs pushes 1,000 new runs to a git daemon on loopback
// holding the 1,000 runs before them: readproof's Push against stock
// `git push --atomic` of the same refs (glob refspecs), interleaved in each
// iteration so both see the same machine load (target: ratio within 2).
// The server is restored before each push, outside the measurement.
// Reported: readproof-s and git-s per push, and their ratio.
func BenchmarkPush1000Runs(b *testing.B) {
	needGit(b)
	base := b.TempDir()
	template := bareServer(b, base, "template.git")
	importRuns(b, template, 0, 1000)
	local := filepath.Join(b.TempDir(), "local")
	if _, err := Clone(context.Background(), template, local, Options{}); err != nil {
		b.Fatal(err)
	}
	importRuns(b, local, 1000, 1000)
	d := startDaemon(b, base)
	serverDir := filepath.Join(base, "shared.git")
	restore := func() {
		os.RemoveAll(serverDir)
		if out, err := exec.Command("cp", "-a", template, serverDir).CombinedOutput(); err != nil {
			b.Fatalf("restore server: %v %s", err, out)
		}
		exec.Command("sync").Run()
	}
	check := func() {
		out, err := gitstore.GitCommand(b, serverDir, "for-each-ref", "--count=1", store.RunsPrefix+"run-01999").Output()
		if err != nil || !strings.Contains(string(out), "run-01999") {
			b.Fatalf("the server lacks the pushed runs: %v %s", err, out)
		}
	}
	s, err := store.Open(local, nil, store.Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	if err := AddRemote(context.Background(), s, "daemon", d.url("shared.git")); err != nil {
		b.Fatal(err)
	}
	var ours, stock time.Duration
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		restore()
		b.StartTimer()
		start := time.Now()
		res, err := Push(context.Background(), s, "daemon", Options{})
		if err != nil {
			b.Fatal(err)
		}
		ours += time.Since(start)
		b.StopTimer()
		if len(res.Runs) != 1000 {
			b.Fatalf("pushed %d runs", len(res.Runs))
		}
		check()
		restore()
		start = time.Now()
		cmd := gitstore.GitCommand(b, local, "push", "--quiet", "--atomic", d.url("shared.git"),
			store.RunsPrefix+"*:"+store.RunsPrefix+"*", "refs/heads/main:refs/heads/main")
		if out, err := cmd.CombinedOutput(); err != nil {
			b.Fatalf("git push: %v %s", err, out)
		}
		stock += time.Since(start)
		check()
		b.StartTimer()
	}
	b.ReportMetric(ours.Seconds()/float64(b.N), "readproof-s")
	b.ReportMetric(stock.Seconds()/float64(b.N), "git-s")
	b.ReportMetric(float64(ours)/float64(stock), "ratio")
}
