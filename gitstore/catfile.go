package gitstore

// A read-only Store over the stock git binary (`git cat-file --batch`). It
// exists for git hooks: a pre-receive hook sees the pushed objects only
// through the quarantine git announces in its environment
// (GIT_OBJECT_DIRECTORY, GIT_ALTERNATE_OBJECT_DIRECTORIES), which only git
// itself reads.

import (
	"bufio"
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/go-git/go-git/v5/plumbing"
)

// ErrReadOnly is returned by the write methods of a Store opened with
// OpenGitReader.
var ErrReadOnly = errors.New("read-only repository view")

type gitReader struct {
	dir string
	git string
	env []string

	mu     sync.Mutex
	cmd    *exec.Cmd // nil once stopped mid-answer, until the next question starts another
	stdin  io.WriteCloser
	stdout *bufio.Reader
	starts int // the `git cat-file --batch` processes started (a test reads it)

	// `git cat-file --batch-check`, started on the first size asked
	// (CheckObjectSize): an object's type and size without its content
	ctx      context.Context
	check    *exec.Cmd
	checkIn  io.WriteCloser
	checkOut *bufio.Reader
}

// OpenGitReader returns a read-only Store of the repository at gitDir that
// reads through `git cat-file --batch` in the current environment, so a
// hook sees the objects of the push it judges. Writes fail with
// ErrReadOnly. Close ends the git process.
func OpenGitReader(ctx context.Context, gitDir string) (Store, error) {
	git, err := findGit()
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrNoGit, err)
	}
	// objects as stored: cat-file would follow refs/replace/
	r := &gitReader{dir: gitDir, git: git, env: append(os.Environ(), "GIT_NO_REPLACE_OBJECTS=1"), ctx: ctx}
	if err := r.start(); err != nil {
		return nil, err
	}
	return r, nil
}

// start starts the `git cat-file --batch` process. Called with r.mu held,
// or before r is shared.
func (r *gitReader) start() error {
	cmd, stdin, out, err := r.catFile("--batch")
	if err != nil {
		return err
	}
	r.cmd, r.stdin, r.stdout = cmd, stdin, bufio.NewReaderSize(out, 64<<10)
	r.starts++
	return nil
}

// catFile starts `git cat-file MODE` on the repository, with pipes to its
// stdin and from its stdout. On failure nothing is left open.
func (r *gitReader) catFile(mode string) (*exec.Cmd, io.WriteCloser, io.Reader, error) {
	cmd := exec.CommandContext(r.ctx, r.git, "--git-dir="+r.dir, "cat-file", mode)
	cmd.Env = r.env
	cmd.WaitDelay = 5 * time.Second
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, nil, nil, err
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		stdin.Close()
		return nil, nil, nil, err
	}
	if err := cmd.Start(); err != nil {
		// Start closed the pipes it made
		return nil, nil, nil, fmt.Errorf("start git cat-file: %w", err)
	}
	return cmd, stdin, out, nil
}

// stop ends the `git cat-file --batch` process in the middle of an answer:
// what is left of it in the pipe would be read as the next answer, so the
// next question starts another process. Called with r.mu held.
func (r *gitReader) stop() {
	if r.cmd == nil {
		return
	}
	kill(r.cmd, r.stdin)
	r.cmd = nil
}

// kill ends a cat-file process cmd whose stdin is in, whatever it is
// doing, and waits for it.
func kill(cmd *exec.Cmd, in io.Closer) {
	in.Close()
	cmd.Process.Kill()
	cmd.Wait()
}

// drainMax is the most of a refused answer the reader reads through to
// reach the next one; past it, stopping git and starting another costs
// less than having git inflate the rest into the pipe.
const drainMax = 1 << 20

// skip passes over the rest of an answer of size bytes (and its newline)
// that the reader refuses: read through when small, else the process is
// stopped. Called with r.mu held.
func (r *gitReader) skip(size int) error {
	if size > drainMax {
		r.stop()
		return nil
	}
	if _, err := r.stdout.Discard(size + 1); err != nil {
		r.stop()
		return fmt.Errorf("git cat-file: %w", err)
	}
	return nil
}

func (r *gitReader) Path() string { return r.dir }

func (r *gitReader) RawObject(id OID) (string, []byte, error) {
	return r.rawObjectAtMost(id, -1)
}

// rawObjectAtMost is RawObject that, for max >= 0, refuses an object of
// more than max bytes (ErrTooLarge) by the size cat-file announces: its
// content is skipped, not held.
func (r *gitReader) rawObjectAtMost(id OID, max int64) (string, []byte, error) {
	if !isHexOID(string(id)) {
		return "", nil, fmt.Errorf("object %q: %w", id, ErrNotFound)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	kind, size, err := r.ask(id)
	if err != nil {
		return "", nil, err
	}
	if max >= 0 && int64(size) > max {
		if err := r.skip(size); err != nil {
			return "", nil, err
		}
		return "", nil, tooLarge(id, int64(size), max)
	}
	data := make([]byte, size+1)
	if _, err := io.ReadFull(r.stdout, data); err != nil {
		r.stop()
		return "", nil, fmt.Errorf("git cat-file: %w", err)
	}
	if data[size] != '\n' {
		r.stop()
		return "", nil, fmt.Errorf("git cat-file: object %s: its content does not end where its size says", id)
	}
	return kind, data[:size], nil
}

// ask sends id to cat-file and reads the answer's header: the object's
// type and size, its content (and a newline) to follow. Called with r.mu
// held. A process stopped in the middle of an earlier answer is started
// again first; one whose answer cannot be read, or names another object
// than id, is stopped, so that no question reads another's answer.
func (r *gitReader) ask(id OID) (kind string, size int, err error) {
	if r.cmd == nil {
		if err := r.start(); err != nil {
			return "", 0, err
		}
	}
	a, err := question(r.stdin, r.stdout, id)
	if err == nil && a.size > maxInt-1 {
		err = fmt.Errorf("git cat-file: object %s: %d bytes, more than this platform reads", id, a.size)
	}
	if err != nil {
		r.stop()
		return "", 0, err
	}
	if a.missing {
		return "", 0, fmt.Errorf("object %s: %w", id, ErrNotFound)
	}
	return a.kind, int(a.size), nil
}

// question sends id to a cat-file process (its stdin in, its stdout out)
// and reads the header of the answer. After an error (an answer that
// cannot be read, or names another object than id) the process is out of
// step: the caller stops it.
func question(in io.Writer, out *bufio.Reader, id OID) (catFileAnswer, error) {
	if _, err := io.WriteString(in, string(id)+"\n"); err != nil {
		return catFileAnswer{}, fmt.Errorf("git cat-file: %w", err)
	}
	line, err := out.ReadString('\n')
	if err != nil {
		return catFileAnswer{}, fmt.Errorf("git cat-file: %w", err)
	}
	a, err := parseCatFileAnswer(line)
	if err == nil && a.oid != string(id) {
		err = fmt.Errorf("git cat-file: answer for %s names another object: %q", id, truncate([]byte(line)))
	}
	return a, err
}

// maxInt is the largest int.
const maxInt = int64(^uint(0) >> 1)

// catFileAnswer is the header line `git cat-file --batch` and
// `--batch-check` answer a full object id with: "OID TYPE SIZE", or
// "OID missing".
type catFileAnswer struct {
	oid     string
	kind    string
	size    int64
	missing bool
}

// parseCatFileAnswer parses one header line of cat-file's default format,
// its newline included: the object id, then its type and size in decimal
// digits, or the word missing, separated by single spaces.
func parseCatFileAnswer(line string) (catFileAnswer, error) {
	bad := func() (catFileAnswer, error) {
		return catFileAnswer{}, fmt.Errorf("git cat-file: unexpected answer %q", truncate([]byte(line)))
	}
	body, ok := strings.CutSuffix(line, "\n")
	if !ok {
		return bad()
	}
	f := strings.Split(body, " ")
	if len(f) < 2 || !isHexOID(f[0]) {
		return bad()
	}
	if len(f) == 2 && f[1] == "missing" {
		return catFileAnswer{oid: f[0], missing: true}, nil
	}
	if len(f) != 3 || f[1] == "" || f[2] == "" || len(f[2]) > 1 && f[2][0] == '0' {
		return bad()
	}
	for _, c := range []byte(f[1]) {
		if c < 'a' || c > 'z' {
			return bad()
		}
	}
	for _, c := range []byte(f[2]) {
		if c < '0' || c > '9' {
			return bad()
		}
	}
	size, err := strconv.ParseInt(f[2], 10, 64)
	if err != nil {
		return bad()
	}
	return catFileAnswer{oid: f[0], kind: f[1], size: size}, nil
}

// BlobTo streams the content cat-file sends into w, hashing it on the
// way (cat-file does not check a packed object against its id).
func (r *gitReader) BlobTo(id OID, max int64, w io.Writer) (int64, error) {
	if !isHexOID(string(id)) {
		return 0, fmt.Errorf("object %q: %w", id, ErrNotFound)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	kind, size, err := r.ask(id)
	if err != nil {
		return 0, err
	}
	var refusal error
	if kind != "blob" {
		refusal = fmt.Errorf("object %s is a %s, not a blob: %w", id, kind, ErrNotFound)
	} else if max >= 0 && int64(size) > max {
		refusal = tooLarge(id, int64(size), max)
	}
	if refusal != nil {
		if err := r.skip(size); err != nil {
			return 0, err
		}
		return 0, refusal
	}
	// refused above: BlobTo's sink only hashes, counts and passes on
	sw := &streamWriter{id: id, max: -1, w: w}
	sw.begin(plumbing.BlobObject, int64(size))
	content := &io.LimitedReader{R: r.stdout, N: int64(size)}
	n, err := io.CopyBuffer(sw, content, make([]byte, streamChunk))
	if sw.werr != nil {
		// The caller's writer failed: the rest of the answer is not
		// read into it. skip reads a small rest through, so that the
		// next question gets its own answer, and stops git in the
		// middle of a large one; the next question starts another.
		r.skip(int(content.N))
		return sw.n, sw.werr
	}
	if err == nil && n < int64(size) {
		err = io.ErrUnexpectedEOF
	}
	if err != nil {
		r.stop()
		return sw.n, fmt.Errorf("git cat-file: %w", err)
	}
	if nl, err := r.stdout.ReadByte(); err != nil || nl != '\n' {
		r.stop()
		if err == nil {
			err = fmt.Errorf("object %s: its content does not end where its size says", id)
		}
		return sw.n, fmt.Errorf("git cat-file: %w", err)
	}
	if hex.EncodeToString(sw.sha.Sum(nil)) != string(id) {
		return sw.n, errContentMismatch(id)
	}
	return sw.n, nil
}

func (r *gitReader) object(id OID, want string) ([]byte, error) {
	kind, data, err := r.RawObject(id)
	if err != nil {
		return nil, err
	}
	if kind != want {
		return nil, fmt.Errorf("object %s is a %s, not a %s: %w", id, kind, want, ErrNotFound)
	}
	return data, nil
}

func (r *gitReader) Blob(id OID) ([]byte, error) { return r.object(id, "blob") }

func (r *gitReader) BlobAtMost(id OID, max int64) ([]byte, error) {
	kind, data, err := r.rawObjectAtMost(id, max)
	if err != nil {
		return nil, err
	}
	if kind != "blob" {
		return nil, fmt.Errorf("object %s is a %s, not a blob: %w", id, kind, ErrNotFound)
	}
	return data, nil
}

func (r *gitReader) Has(id OID) (bool, error) {
	_, _, err := r.RawObject(id)
	if errors.Is(err, ErrNotFound) {
		return false, nil
	}
	return err == nil, err
}

func (r *gitReader) Tree(id OID) ([]TreeEntry, error) {
	data, err := r.object(id, "tree")
	if err != nil {
		return nil, err
	}
	return decodeTree(id, data)
}

func (r *gitReader) Commit(id OID) (Commit, error) {
	data, err := r.object(id, "commit")
	if err != nil {
		return Commit{}, err
	}
	c, err := decodeCommit(id, data)
	if err == nil && c.Tree == zeroOID {
		// go-git reads a malformed tree line as the null id.
		return Commit{}, fmt.Errorf("commit %s: %w", id, ErrCorrupt)
	}
	return c, err
}

func (r *gitReader) Ref(name string) (OID, error) {
	refs, err := r.Refs(name)
	if err != nil {
		return "", err
	}
	for _, ref := range refs {
		if ref.Name == name {
			return ref.OID, nil
		}
	}
	return "", fmt.Errorf("ref %s: %w", name, ErrNotFound)
}

func (r *gitReader) Refs(prefix string) ([]Ref, error) {
	cmd := exec.Command(r.git, "--git-dir="+r.dir, "for-each-ref", "--format=%(objectname) %(refname)")
	cmd.Env = r.env
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("list refs: %w", err)
	}
	var refs []Ref
	for _, line := range strings.Split(string(out), "\n") {
		oid, name, ok := strings.Cut(line, " ")
		if ok && strings.HasPrefix(name, prefix) && isHexOID(oid) {
			refs = append(refs, Ref{Name: name, OID: OID(oid)})
		}
	}
	return refs, nil
}

func (r *gitReader) PutBlob([]byte) (OID, error)      { return "", ErrReadOnly }
func (r *gitReader) PutTree([]TreeEntry) (OID, error) { return "", ErrReadOnly }
func (r *gitReader) PutCommit(Commit) (OID, error)    { return "", ErrReadOnly }
func (r *gitReader) Update(...RefUpdate) error        { return ErrReadOnly }
func (r *gitReader) Sync() error                      { return nil }

// stopCheck ends the `git cat-file --batch-check` process; the next size
// asked starts another. Called with r.mu held.
func (r *gitReader) stopCheck() {
	if r.check == nil {
		return
	}
	kill(r.check, r.checkIn)
	r.check = nil
}

func (r *gitReader) Close() error {
	r.mu.Lock()
	if r.check != nil {
		r.checkIn.Close()
		r.check.Wait()
		r.check = nil
	}
	cmd := r.cmd
	r.cmd = nil
	r.mu.Unlock()
	if cmd == nil {
		return nil // stopped mid-answer, and not started again
	}
	r.stdin.Close()
	return cmd.Wait()
}

// checkSize is CheckObjectSize through `git cat-file --batch-check`, which
// names an object's type and size without sending its content: a pushed
// ref naming a blob of gigabytes is refused without git inflating it into
// the pipe. A missing object passes, as in a store: the read that follows
// reports it.
func (r *gitReader) checkSize(id OID, max int64) error {
	if !isHexOID(string(id)) {
		return nil
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.check == nil {
		cmd, in, out, err := r.catFile("--batch-check")
		if err != nil {
			return err
		}
		r.check, r.checkIn, r.checkOut = cmd, in, bufio.NewReader(out)
	}
	// an answer not read, or not this question's, leaves the process out
	// of step: it is stopped, and the next question starts another
	a, err := question(r.checkIn, r.checkOut, id)
	if err != nil {
		r.stopCheck()
		return err
	}
	if !a.missing && a.size > max {
		return tooLarge(id, a.size, max)
	}
	return nil
}
