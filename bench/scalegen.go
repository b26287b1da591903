//go:build ignore

// scalegen adds N committed runs to a readproof store through one
// `git fast-import`, copying the shape of a run the CLI already committed:
// each new run gets its own manifest.json (run id and times changed), its own
// manifest commit under refs/tags/readproof/runs/, and a journal commit on
// main whose run.json names it, exactly as `readproof run --id` writes them
// (docs/store-format.md). The documents are the template run's, so the new
// runs deliver the same snapshots. bench/flat.sh uses it.
//
// With -ahead D, the first run added is stamped D after the template (a
// run from a clock D fast, as a pull brings it) and the N runs come after
// it on the journal but before it in run order, so the view keeps naming
// it: the store a write behind a future run meets (docs/scaling.md,
// session 19).
//
//	go run bench/scalegen.go -store DIR -template RUN -n N [-prefix s] [-ahead 14h]
package main

import (
	"bufio"
	"bytes"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"time"
)

func main() {
	store := flag.String("store", ".readproof", "the store's git directory")
	tmpl := flag.String("template", "", "id of a committed run to copy")
	n := flag.Int("n", 1000, "runs to add")
	prefix := flag.String("prefix", "s", "run ids are PREFIX plus a number")
	ahead := flag.Duration("ahead", 0, "first add one run stamped this much after the template")
	flag.Parse()
	if err := run(*store, *tmpl, *n, *prefix, *ahead); err != nil {
		fmt.Fprintln(os.Stderr, "scalegen:", err)
		os.Exit(1)
	}
}

func git(store string, args ...string) ([]byte, error) {
	out, err := exec.Command("git", append([]string{"--git-dir=" + store}, args...)...).Output()
	if err != nil {
		return nil, fmt.Errorf("git %s: %w", strings.Join(args, " "), err)
	}
	return out, nil
}

func run(store, tmpl string, n int, prefix string, ahead time.Duration) error {
	if tmpl == "" {
		return fmt.Errorf("name the template run with -template")
	}
	runRef := "refs/tags/readproof/runs/" + tmpl
	manifest, err := git(store, "cat-file", "blob", runRef+":manifest.json")
	if err != nil {
		return err
	}
	msg, err := git(store, "log", "-1", "--format=%B", runRef)
	if err != nil {
		return err
	}
	msg = bytes.TrimRight(msg, "\n")
	content, err := git(store, "rev-parse", runRef+":content")
	if err != nil {
		return err
	}
	view, err := git(store, "cat-file", "blob", "main:run.json")
	if err != nil {
		return err
	}
	mainTip, err := git(store, "rev-parse", "main")
	if err != nil {
		return err
	}

	cmd := exec.Command("git", "--git-dir="+store, "fast-import", "--quiet", "--done")
	in, err := cmd.StdinPipe()
	if err != nil {
		return err
	}
	outPipe, err := cmd.StdoutPipe()
	if err != nil {
		return err
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		return err
	}
	w := bufio.NewWriterSize(in, 1<<20)
	r := bufio.NewReader(outPipe)

	idRe := regexp.MustCompile(`"run_id": "[^"]*"`)
	startRe := regexp.MustCompile(`"started_at": "[^"]*"`)
	createdRe := regexp.MustCompile(`"created_at": "[^"]*"`)
	manifestRe := regexp.MustCompile(`"manifest": "[^"]*"`)
	// The new runs come after the template in run order (the journal's
	// view names the newest run by created_at).
	m0 := createdRe.Find(manifest)
	if m0 == nil {
		return fmt.Errorf("template manifest has no created_at")
	}
	t0, err := time.Parse(time.RFC3339Nano, strings.TrimSuffix(strings.TrimPrefix(string(m0), `"created_at": "`), `"`))
	if err != nil {
		return fmt.Errorf("template manifest: %w", err)
	}
	// One microsecond apart from the template's time: the newest is
	// n microseconds after it, so a run recorded once the store is built
	// is the newest, as a new run is in a store that grew over time.
	// (One second apart put the newest 14 hours ahead at 50,000 runs, and
	// every later run sorted before it: a journal recorded out of run
	// order, whose view each write folds again from every run.)
	base := t0.UTC()
	data := func(b []byte) {
		fmt.Fprintf(w, "data %d\n", len(b))
		w.Write(b)
		w.WriteString("\n")
	}
	parent := strings.TrimSpace(string(mainTip))
	mark := 0
	first := 1
	var newest []byte // run.json naming the run ahead, once added
	if ahead > 0 {
		first = 0
	}
	for i := first; i <= n; i++ {
		id := fmt.Sprintf("%s%06d", prefix, i)
		when := base.Add(time.Duration(i) * time.Microsecond)
		if i == 0 {
			id, when = prefix+"-ahead", base.Add(ahead)
		}
		stamp := when.Format(time.RFC3339Nano)
		who := fmt.Sprintf("readproof <readproof@localhost> %d +0000", when.Unix())

		m := idRe.ReplaceAll(manifest, []byte(`"run_id": "`+id+`"`))
		m = startRe.ReplaceAll(m, []byte(`"started_at": "`+stamp+`"`))
		m = createdRe.ReplaceAll(m, []byte(`"created_at": "`+stamp+`"`))
		mark++
		blob := mark
		fmt.Fprintf(w, "blob\nmark :%d\n", blob)
		data(m)

		cm := strings.ReplaceAll(string(msg), "readproof run "+tmpl+":", "readproof run "+id+":")
		cm = strings.ReplaceAll(cm, "Readproof-Run: "+tmpl+"\n", "Readproof-Run: "+id+"\n") + "\n"
		mark++
		commit := mark
		fmt.Fprintf(w, "commit %s%s\nmark :%d\nauthor %s\ncommitter %s\n", "refs/tags/readproof/runs/", id, commit, who, who)
		data([]byte(cm))
		fmt.Fprintf(w, "M 040000 %s content\nM 100644 :%d manifest.json\n\n", strings.TrimSpace(string(content)), blob)
		fmt.Fprintf(w, "get-mark :%d\n", commit)
		if err := w.Flush(); err != nil {
			return err
		}
		line, err := r.ReadString('\n')
		if err != nil {
			return fmt.Errorf("fast-import: %w", err)
		}
		mid := strings.TrimSpace(line)

		v := idRe.ReplaceAll(view, []byte(`"run_id": "`+id+`"`))
		v = manifestRe.ReplaceAll(v, []byte(`"manifest": "`+mid+`"`))
		v = createdRe.ReplaceAll(v, []byte(`"created_at": "`+stamp+`"`))
		switch {
		case i == 0:
			newest = v
		case newest != nil:
			v = newest // the run ahead stays the newest
		}
		mark++
		vblob := mark
		fmt.Fprintf(w, "blob\nmark :%d\n", vblob)
		data(v)
		mark++
		fmt.Fprintf(w, "commit refs/heads/main\nmark :%d\nauthor %s\ncommitter %s\n", mark, who, who)
		data([]byte("record run " + id + "\n\nmanifest " + mid + "\n"))
		fmt.Fprintf(w, "from %s\nmerge :%d\nM 100644 :%d run.json\n\n", parent, commit, vblob)
		parent = fmt.Sprintf(":%d", mark)
	}
	w.WriteString("done\n")
	if err := w.Flush(); err != nil {
		return err
	}
	in.Close()
	io.Copy(io.Discard, r)
	return cmd.Wait()
}
