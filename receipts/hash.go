package receipts

import (
	"crypto/sha256"
	"encoding/binary"
	"hash"
	"io"
	"strconv"
)

// Domain labels of the framed hashes (docs/receipts.md, "Arguments" and
// "Results"). Each hash starts with its label, framed like every other part,
// so an argv can never hash like a JSON document or a command result like a
// byte result.
const (
	labelArgv          = "readproof receipt args argv v1"
	labelJSON          = "readproof receipt args json v1"
	labelCommandResult = "readproof receipt result command v1"
	labelBytesResult   = "readproof receipt result bytes v1"
)

// framedHash is SHA-256 over parts, each framed as a 4-byte big-endian
// length followed by the bytes.
func framedHash(parts ...[]byte) Digest {
	h := sha256.New()
	for _, p := range parts {
		writeFrame(h, p)
	}
	var d Digest
	copy(d[:], h.Sum(nil))
	return d
}

// writeFrame writes p to h as framedHash frames each part: its length (4
// bytes, big-endian), then its bytes.
func writeFrame(h hash.Hash, p []byte) {
	var n [4]byte
	binary.BigEndian.PutUint32(n[:], uint32(len(p)))
	h.Write(n[:])
	h.Write(p)
}

func sha(b []byte) []byte {
	s := sha256.Sum256(b)
	return s[:]
}

// Args are a call's canonical arguments, reduced to their hash. Build them
// with ArgvArgs or JSONArgs.
type Args struct {
	sum Digest
	set bool
}

// SHA256 is the hash recorded in the receipt.
func (a Args) SHA256() Digest { return a.sum }

// ArgvArgs hashes a command line: each element framed in order, argv[0]
// exactly as given (not resolved through PATH).
func ArgvArgs(argv []string) Args {
	parts := make([][]byte, 0, len(argv)+1)
	parts = append(parts, []byte(labelArgv))
	for _, a := range argv {
		parts = append(parts, []byte(a))
	}
	return Args{sum: framedHash(parts...), set: true}
}

// JSONArgs hashes JSON arguments in their canonical form (see Canonicalize):
// two documents that differ only in member order, whitespace, escapes or
// number spelling hash alike.
func JSONArgs(data []byte) (Args, error) {
	c, err := Canonicalize(data)
	if err != nil {
		return Args{}, err
	}
	return Args{sum: framedHash([]byte(labelJSON), c), set: true}, nil
}

// Result is a call's result, reduced to its hash plus the outcome fields a
// receipt shows in clear. Build it with BytesResult, CommandResult or
// ExecResult.Result.
type Result struct {
	sum      Digest
	set      bool
	exitCode *int
	signal   string
	err      string
}

// SHA256 is the hash recorded in the receipt.
func (r Result) SHA256() Digest { return r.sum }

// WithError returns r with an error message recorded in the receipt (for a
// call that failed outside its result bytes). Messages longer than
// MaxErrorLen bytes are cut.
func (r Result) WithError(msg string) Result {
	r.err = cleanText(msg, MaxErrorLen)
	return r
}

// BytesResult hashes the result of a non-command tool: the SHA-256 of the
// bytes, framed under the bytes-result label.
func BytesResult(b []byte) Result {
	return Result{sum: bytesResultSum(sha(b)), set: true}
}

// BytesResultReader is BytesResult for a result too large to hold in memory.
func BytesResultReader(r io.Reader) (Result, error) {
	h := sha256.New()
	if _, err := io.Copy(h, r); err != nil {
		return Result{}, err
	}
	return Result{sum: bytesResultSum(h.Sum(nil)), set: true}, nil
}

func bytesResultSum(inner []byte) Digest {
	return framedHash([]byte(labelBytesResult), inner)
}

// CommandResult hashes a command's outcome from its captured stdout, stderr
// and exit code (for a call brokered elsewhere; Exec computes the same while
// streaming). signal is "" or the name of the signal that killed it.
func CommandResult(stdout, stderr []byte, exitCode int, signal string) Result {
	var so, se Digest
	copy(so[:], sha(stdout))
	copy(se[:], sha(stderr))
	return commandResult(so, se, exitCode, signal)
}

func commandResult(stdoutSum, stderrSum Digest, exitCode int, signal string) Result {
	code := exitCode
	return Result{
		sum:      commandResultSum(stdoutSum, stderrSum, exitCode),
		set:      true,
		exitCode: &code,
		signal:   cleanText(signal, MaxSignalLen),
	}
}

func commandResultSum(stdoutSum, stderrSum Digest, exitCode int) Digest {
	return framedHash([]byte(labelCommandResult), stdoutSum[:], stderrSum[:],
		binary.BigEndian.AppendUint32(nil, uint32(int32(exitCode))))
}

// cleanText makes s acceptable to validText: invalid UTF-8 and control
// characters become U+FFFD and '?', and the result is cut to max bytes on a
// rune boundary.
func cleanText(s string, max int) string {
	out := make([]rune, 0, len(s))
	for _, c := range s {
		if c < 0x20 || c == 0x7f || (c >= 0x80 && c < 0xa0) {
			c = '?'
		}
		out = append(out, c)
	}
	b := []byte(string(out))
	if len(b) <= max {
		return string(b)
	}
	cut := max
	for cut > 0 && b[cut]&0xc0 == 0x80 {
		cut--
	}
	return string(b[:cut])
}

// hashingWriter hashes every byte a command writes and forwards it to w.
// When w fails the error goes back to os/exec, which closes the pipe, so the
// command sees EPIPE or SIGPIPE just as it would writing to a closed pipe
// itself.
type hashingWriter struct {
	h   hash.Hash
	w   io.Writer
	n   int64
	err error // the consumer's first write error
}

func (hw *hashingWriter) Write(p []byte) (int, error) {
	hw.h.Write(p)
	hw.n += int64(len(p))
	if hw.w == nil {
		return len(p), nil
	}
	n, err := hw.w.Write(p)
	if err == nil && n < len(p) {
		err = io.ErrShortWrite
	}
	if err != nil && hw.err == nil {
		hw.err = err
	}
	return n, err
}

func (hw *hashingWriter) sum() Digest {
	var d Digest
	copy(d[:], hw.h.Sum(nil))
	return d
}

func itoa(n int) string { return strconv.Itoa(n) }
