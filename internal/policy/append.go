package policy

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/BurntSushi/toml"

	"github.com/readproof/readproof/adapters/sourcespec"
	"github.com/readproof/readproof/internal/lockfile"
	"github.com/readproof/readproof/internal/progress"
)

// newFileHeader starts a policy file that AppendResource creates.
const newFileHeader = `# readproof policy file: the documents agents may read, where each one comes
# from and how fresh it must be. readproof.toml.example documents every key.
version = 1
`

// lockWait bounds how long AppendResource waits for another writer.
var lockWait = 5 * time.Second

// AppendResource declares r in the policy file at path (`readproof resource
// add`). It refuses a URI the file already declares (ErrDuplicate), appends
// one [[resource]] block as text so existing content and comments stay as
// they are, creates the file when it is missing, re-parses the result and
// only then replaces the file atomically. On any error the file is left
// unchanged.
func AppendResource(path string, r Resource) error {
	return AppendResourceThen(path, r, nil)
}

// AppendResourceThen is AppendResource with beforeWrite called, under the
// file's lock, once the new resource has been checked and just before the
// file is replaced: `resource add` creates the store there, so that a
// resource the file refuses leaves no store behind. An error from
// beforeWrite is returned and the file is left unchanged.
func AppendResourceThen(path string, r Resource, beforeWrite func() error) error {
	return AppendResourceWith(path, r, AppendOptions{BeforeWrite: beforeWrite})
}

// AppendOptions are AppendResourceWith's.
type AppendOptions struct {
	// BeforeWrite is AppendResourceThen's beforeWrite.
	BeforeWrite func() error
	// LockTimeout bounds the wait for another writer's lock of the file,
	// and a lock older than StaleLockAge is taken as left by a killed
	// process (zero: 5s and 10s; an append holds it for milliseconds).
	LockTimeout, StaleLockAge time.Duration
	// LockWait, when set, hears once of a wait for the lock that has
	// lasted progress.WaitNotice.
	LockWait func(progress.Wait)
	// Opened, when set, is the policy file at path as the caller opened
	// it (Open) before the lock: read again under the lock, from its
	// start, when path still names that file (os.SameFile), so that the
	// command opens it once; else path is opened. It is closed once read,
	// before the write (a rename over an open file fails on Windows); the
	// caller closes it too (the lock may fail before the read).
	Opened *os.File
}

// AppendResourceWith is AppendResource with options.
func AppendResourceWith(path string, r Resource, opts AppendOptions) (err error) {
	beforeWrite := opts.BeforeWrite
	name := path
	if name == "" {
		return &Error{File: DefaultFileName, Msg: "no policy file path given", Hint: "pass the path of readproof.toml"}
	}
	target := path
	if real, err := filepath.EvalSymlinks(path); err == nil {
		target = real // write through a symlinked readproof.toml
	}

	lock, err := lockFile(target, opts)
	if err != nil {
		return err
	}
	defer lock.Release()

	old, perm, err := readOld(target, opts.Opened)
	if opts.Opened != nil {
		// read: closed before the new file is renamed over it, which
		// Windows refuses while the file is open (Go opens it without
		// FILE_SHARE_DELETE); before session 31's re-read every resource
		// add failed there
		opts.Opened.Close()
	}
	if err != nil {
		return err
	}

	base := old
	if base == nil {
		base = []byte(newFileHeader)
	}
	f, err := Parse(name, base)
	if err != nil {
		return fmt.Errorf("%w (fix the policy file before adding resources)", err)
	}

	if r.URI.Tag != "" {
		return &Error{File: name, Key: newKey(f, "uri"), Msg: fmt.Sprintf("a declared URI cannot carry a tag (@%s)", r.URI.Tag),
			Hint: fmt.Sprintf("declare %s; tags are set with readproof tag set", r.URI.String())}
	}
	if r.URI.Namespace == "" || r.URI.Path == "" {
		return &Error{File: name, Key: newKey(f, "uri"), Msg: "missing uri", Hint: "give the resource a readproof://NAMESPACE/PATH identity"}
	}
	for i := range f.res {
		if have := &f.res[i]; have.URI.Namespace == r.URI.Namespace && have.URI.Path != r.URI.Path && strings.EqualFold(have.URI.Path, r.URI.Path) {
			return &Error{File: name, Line: have.Line, Key: fmt.Sprintf("resource[%d].uri", i+1), Err: ErrDuplicate,
				Msg:  caseCollision(r.URI, have.URI, have.Line),
				Hint: "choose another URI, or edit that [[resource]] block instead"}
		}
	}
	if have, ok := f.Lookup(r.URI); ok {
		idx := 1
		for i := range f.res {
			if &f.res[i] == have {
				idx = i + 1
			}
		}
		return &Error{File: name, Line: have.Line, Key: fmt.Sprintf("resource[%d].uri", idx), Err: ErrDuplicate,
			Msg:  fmt.Sprintf("%s is already declared at line %d", r.URI.String(), have.Line),
			Hint: "edit that [[resource]] block instead, or choose another URI"}
	}

	block, err := encodeResource(r)
	if err != nil {
		return &Error{File: name, Msg: err.Error(), Hint: "resource fields must be valid UTF-8 text"}
	}
	// The block's lines end as the file's first line does: a file saved
	// with CRLF is not left with two kinds of line end.
	eol := "\n"
	if i := bytes.IndexByte(base, '\n'); i > 0 && base[i-1] == '\r' {
		eol = "\r\n"
		block = strings.ReplaceAll(block, "\n", eol)
	}
	var buf strings.Builder
	buf.Write(base)
	if len(base) > 0 && base[len(base)-1] != '\n' {
		buf.WriteString(eol)
	}
	blockLine := strings.Count(buf.String(), "\n") + 2 // after the blank separator line
	buf.WriteString(eol)
	buf.WriteString(block)
	next := []byte(buf.String())

	nf, err := Parse(name, next)
	if err != nil {
		var pe *Error
		if !errors.As(err, &pe) {
			return err
		}
		var syntax toml.ParseError
		if errors.As(err, &syntax) {
			// The file itself parsed, so the block clashes with it, as
			// when resources are declared inline as resource = [...].
			return &Error{File: name, Msg: "cannot append a [[resource]] block to this file: " + pe.Msg, Err: err,
				Hint: "declare the existing resources as [[resource]] blocks instead of resource = [...]"}
		}
		if pe.Line >= blockLine {
			// The problem is in the new resource: there is no such line in
			// the file, so report the key alone.
			out := *pe
			out.Line, out.Column = 0, 0
			return &out
		}
		return err
	}
	if len(nf.res) != len(f.res)+1 || !sameResource(nf.res[len(nf.res)-1], normalized(r, f)) {
		return &Error{File: name, Msg: "internal error: the new resource reads back differently; nothing was written",
			Hint: "report this as a bug, with the command that was run"}
	}
	if len(next) > MaxFileBytes {
		// written, it would be refused by every command that reads it
		return &Error{File: name, Msg: fmt.Sprintf("adding %s would make the policy file %d bytes, more than the %d MiB a policy file may be; nothing was written", r.URI.String(), len(next), MaxFileBytes>>20),
			Hint: fmt.Sprintf("a policy file holds at most %d MiB (some 150,000 resources): split the resources among projects, each with its own readproof.toml and store", MaxFileBytes>>20)}
	}
	if beforeWrite != nil {
		if err := beforeWrite(); err != nil {
			return err
		}
	}
	if err := writeAtomic(target, next, perm); err != nil {
		return fmt.Errorf("write policy file %s: %w", name, err)
	}
	return nil
}

// newKey names key k of the resource about to be appended to f.
func newKey(f *File, k string) string {
	return fmt.Sprintf("resource[%d].%s", len(f.res)+1, k)
}

// normalized is r as Parse reads it back from f.
func normalized(r Resource, f *File) Resource {
	n := r
	n.Line = 0
	if n.Freshness.Strategy == "" {
		n.Freshness.Strategy = f.Defaults.Policy
	}
	if n.Freshness.Strategy == AllowStale && n.Freshness.MaxAge == 0 {
		n.Freshness.MaxAge = f.Defaults.MaxAge
	}
	if len(n.Source.Headers) == 0 {
		n.Source.Headers = nil
	}
	if len(n.Source.PublicHeaders) == 0 {
		n.Source.PublicHeaders = nil
	}
	if inner, ok := strings.CutPrefix(n.Source.TokenEnv, "${"); ok && strings.HasSuffix(inner, "}") {
		n.Source.TokenEnv = strings.TrimSuffix(inner, "}")
	}
	if n.Source.Ref == "" {
		switch n.Source.Type {
		case "github":
			n.Source.Ref = DefaultGitHubRef
		case "git":
			n.Source.Ref = DefaultGitRef
		}
	}
	return n
}

func sameResource(a, b Resource) bool {
	a.Line, b.Line = 0, 0
	return reflect.DeepEqual(a, b)
}

// encodeResource writes r as a [[resource]] block.
func encodeResource(r Resource) (string, error) {
	var b strings.Builder
	b.WriteString("[[resource]]\n")
	kv := func(k, v string) error {
		if !utf8.ValidString(v) {
			return fmt.Errorf("%s is not valid UTF-8", k)
		}
		fmt.Fprintf(&b, "%s = %s\n", k, quote(v))
		return nil
	}
	steps := []struct{ k, v string }{
		{"uri", r.URI.String()},
		{"description", r.Description},
		{"policy", string(r.Freshness.Strategy)},
		{"max_age", ""},
		{"snapshot", r.Freshness.Snapshot},
		{"content_type", r.ContentType},
	}
	if r.Freshness.MaxAge != 0 {
		steps[3].v = FormatDuration(r.Freshness.MaxAge)
	}
	for _, s := range steps {
		if s.v == "" && s.k != "uri" {
			continue
		}
		if err := kv(s.k, s.v); err != nil {
			return "", err
		}
	}
	src, err := encodeSpec(r.Source)
	if err != nil {
		return "", err
	}
	b.WriteString("source = " + src + "\n")
	return b.String(), nil
}

// encodeSpec writes a source as an inline table, type first.
func encodeSpec(s sourcespec.Spec) (string, error) {
	var parts []string
	for _, kv := range []struct{ k, v string }{
		{"type", s.Type}, {"path", s.Path}, {"url", s.URL}, {"owner", s.Owner}, {"repo", s.Repo},
		{"ref", s.Ref}, {"api_base", s.APIBase}, {"token_env", s.TokenEnv},
	} {
		if kv.v == "" && kv.k != "type" {
			continue
		}
		if !utf8.ValidString(kv.v) {
			return "", fmt.Errorf("source %s is not valid UTF-8", kv.k)
		}
		parts = append(parts, kv.k+" = "+quote(kv.v))
	}
	for _, tbl := range []struct {
		key string
		h   map[string]string
	}{{"headers", s.Headers}, {"public_headers", s.PublicHeaders}} {
		if len(tbl.h) == 0 {
			continue
		}
		names := make([]string, 0, len(tbl.h))
		for k := range tbl.h {
			names = append(names, k)
		}
		sort.Strings(names)
		var hs []string
		for _, k := range names {
			if !utf8.ValidString(k) || !utf8.ValidString(tbl.h[k]) {
				return "", errors.New("a source header is not valid UTF-8")
			}
			hs = append(hs, encodeKey(k)+" = "+quote(tbl.h[k]))
		}
		parts = append(parts, tbl.key+" = { "+strings.Join(hs, ", ")+" }")
	}
	return "{ " + strings.Join(parts, ", ") + " }", nil
}

// quote writes s as a TOML basic string.
func quote(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range s {
		switch r {
		case '"':
			b.WriteString(`\"`)
		case '\\':
			b.WriteString(`\\`)
		case '\b':
			b.WriteString(`\b`)
		case '\t':
			b.WriteString(`\t`)
		case '\n':
			b.WriteString(`\n`)
		case '\f':
			b.WriteString(`\f`)
		case '\r':
			b.WriteString(`\r`)
		default:
			if r < 0x20 || r == 0x7f {
				fmt.Fprintf(&b, `\u%04X`, r)
			} else {
				b.WriteRune(r)
			}
		}
	}
	b.WriteByte('"')
	return b.String()
}

// encodeKey writes a key bare when TOML allows it, quoted otherwise.
func encodeKey(k string) string {
	if k == "" {
		return `""`
	}
	for i := 0; i < len(k); i++ {
		if !isBareKeyByte(k[i]) {
			return quote(k)
		}
	}
	return k
}

// lockFile takes PATH.lock (internal/lockfile), so two writers cannot
// interleave their read-modify-write of the policy file.
func lockFile(target string, opts AppendOptions) (*lockfile.Lock, error) {
	owner := lockfile.Owner{Timeout: lockWait, StaleAge: staleLockAge, Task: "changing the policy file",
		Locked: fmt.Errorf("policy file %s is locked by another readproof", target), Failed: "lock policy file"}
	return owner.Acquire(target, lockfile.Options{Timeout: opts.LockTimeout, StaleAge: opts.StaleLockAge, Wait: opts.LockWait})
}

// staleLockAge is how old a policy lock must be to be taken as left by a
// killed process: an append holds it for milliseconds.
var staleLockAge = 10 * time.Second

// writeAtomic replaces target with data: a temporary file in the same
// directory, fsync, rename, fsync of the directory.
func writeAtomic(target string, data []byte, perm fs.FileMode) (err error) {
	dir := filepath.Dir(target)
	tmp, err := os.CreateTemp(dir, "."+filepath.Base(target)+".tmp-*")
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			tmp.Close()
			os.Remove(tmp.Name())
		}
	}()
	if _, err = tmp.Write(data); err != nil {
		return err
	}
	if err = tmp.Chmod(perm); err != nil {
		return err
	}
	if err = tmp.Sync(); err != nil {
		return err
	}
	if err = tmp.Close(); err != nil {
		return err
	}
	if err = os.Rename(tmp.Name(), target); err != nil {
		return err
	}
	if d, derr := os.Open(dir); derr == nil {
		d.Sync() // best effort: not every platform syncs directories
		d.Close()
	}
	return nil
}

// readOld reads the policy file at path as Open opens it (readText), for
// AppendResource: its bytes (nil when there is none) and its permissions.
func readOld(path string, opened *os.File) (old []byte, perm fs.FileMode, err error) {
	if text, fi, ok := readOpened(path, opened); ok {
		return []byte(text), fi.Mode().Perm(), nil
	}
	text, fi, err := readText(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, 0o644, nil
	}
	if err != nil {
		return nil, 0, err
	}
	return []byte(text), fi.Mode().Perm(), nil
}

// readOpened reads opened, the policy file as opened (Open) at path
// before the file's lock was taken, from its start, when path names that
// file still (a writer replaces the file by a rename, so its bytes read
// now are the file's under the lock); ok is false when it does not, or
// the read failed (readOld then opens path, and names any error).
func readOpened(path string, opened *os.File) (text string, fi fs.FileInfo, ok bool) {
	if opened == nil {
		return "", nil, false
	}
	fi, err := opened.Stat()
	if err != nil || !fi.Mode().IsRegular() {
		return "", nil, false
	}
	if now, err := os.Stat(path); err != nil || !os.SameFile(fi, now) {
		return "", nil, false
	}
	if _, err := opened.Seek(0, io.SeekStart); err != nil {
		return "", nil, false
	}
	if text, err = readFrom(path, opened, fi); err != nil {
		return "", nil, false
	}
	return text, fi, true
}
