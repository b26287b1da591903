package gitstore

// The mirror's transport for repositories on this machine (paths and file://
// URLs): stock git's upload-pack on a pipe, spoken to in protocol v0, as
// go-git's file transport did. That transport's package also holds go-git's
// in-process git server, which links go-git's object model, revision walker
// and OpenPGP code into every binary that links gitstore; this file needs
// none of it.

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"strings"
	"sync"

	"github.com/go-git/go-git/v5/plumbing/format/pktline"
	"github.com/go-git/go-git/v5/plumbing/protocol/packp"
	"github.com/go-git/go-git/v5/plumbing/transport"
	"github.com/go-git/go-git/v5/utils/ioutil"
)

// localTransport opens upload-pack sessions on local repositories.
type localTransport struct{}

func (localTransport) NewUploadPackSession(ep *transport.Endpoint, _ transport.AuthMethod) (transport.UploadPackSession, error) {
	// go-git's endpoints make local paths absolute, so PATH never begins
	// with "-"; "--" keeps it a path whatever the caller passes.
	cmd := exec.Command("git", "-c", bigObjects, "upload-pack", "--", ep.Path)
	// A hook's environment (GIT_OBJECT_DIRECTORY, GIT_NAMESPACE, ...) must
	// not point upload-pack at another repository's objects or refs.
	// (Transport.env drops them, and keeps git from prompting.)
	cmd.Env = (&Transport{}).env()
	s := &localSession{
		stop: func() {
			if cmd.Process != nil {
				_ = cmd.Process.Kill()
			}
		},
		reap: func() { _ = cmd.Wait() },
	}
	cmd.Stderr = &s.stderr
	var err error
	if s.stdin, err = cmd.StdinPipe(); err != nil {
		return nil, err
	}
	if s.stdout, err = cmd.StdoutPipe(); err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	return s, nil
}

func (localTransport) NewReceivePackSession(*transport.Endpoint, transport.AuthMethod) (transport.ReceivePackSession, error) {
	return nil, errors.New("the mirror never pushes")
}

// localSession is one `git upload-pack` process, or one upload-pack
// reached over a connection (git://, ssh: mirror_dial.go).
type localSession struct {
	// stop ends the other side at once (kills the process, closes the
	// connection); reap waits for it to end once its input is closed.
	stop   func()
	reap   func()
	stdin  io.WriteCloser
	stdout io.Reader
	stderr firstBytes

	advRefs  *packp.AdvRefs
	packRun  bool // the request was sent: stdin is closed
	finished bool // nothing more goes to stdin
	closed   bool

	// advert bounds the advertisement (Mirror.Fetch sets it); nil: unbounded
	advert *advertGuard
}

func (s *localSession) AdvertisedReferences() (*packp.AdvRefs, error) {
	return s.AdvertisedReferencesContext(context.Background())
}

// AdvertisedReferencesContext reads the refs the server advertises. A
// repository that is not there is transport.ErrRepositoryNotFound, one with
// no refs transport.ErrEmptyRemoteRepository.
func (s *localSession) AdvertisedReferencesContext(ctx context.Context) (*packp.AdvRefs, error) {
	if s.advRefs != nil {
		return s.advRefs, nil
	}
	ar := packp.NewAdvRefs()
	var out io.Reader = ioutil.NewContextReader(ctx, s.stdout)
	if s.advert != nil {
		out = s.advert.reader(out)
	}
	// on an error (the bound's among them) the other side is stopped
	if err := ar.Decode(ioutil.NewReaderOnError(out, s.onError)); err != nil {
		var errLine *pktline.ErrorLine
		var unexpected *packp.ErrUnexpectedData
		switch {
		case errors.As(err, &errLine):
			if isRepoNotFound(errLine.Text) {
				return nil, transport.ErrRepositoryNotFound
			}
			return nil, errLine
		case errors.Is(err, packp.ErrEmptyInput):
			// upload-pack said nothing: it failed, and says why on stderr.
			s.finished = true
			s.wait()
			line := s.stderr.firstLine()
			switch {
			case line == "":
				return nil, io.ErrUnexpectedEOF
			case isRepoNotFound(line):
				return nil, transport.ErrRepositoryNotFound
			}
			return nil, fmt.Errorf("unknown error: %s", line)
		case errors.Is(err, packp.ErrEmptyAdvRefs):
			if err := s.finish(); err != nil {
				return nil, err
			}
			return nil, transport.ErrEmptyRemoteRepository
		case errors.As(err, &unexpected) && isRepoNotFound(string(unexpected.Data)):
			return nil, transport.ErrRepositoryNotFound
		}
		return nil, err
	}
	if ar.IsEmpty() {
		return nil, transport.ErrEmptyRemoteRepository
	}
	transport.FilterUnsupportedCapabilities(ar.Capabilities)
	s.advRefs = ar
	return ar, nil
}

// UploadPack sends the wants, haves and "done", and returns the server's
// answer with the pack; closing it ends the session.
func (s *localSession) UploadPack(ctx context.Context, req *packp.UploadPackRequest) (*packp.UploadPackResponse, error) {
	if req.IsEmpty() {
		if err := s.finish(); err != nil {
			return nil, err
		}
		return nil, transport.ErrEmptyUploadPackRequest
	}
	if err := req.Validate(); err != nil {
		return nil, err
	}
	if _, err := s.AdvertisedReferencesContext(ctx); err != nil {
		return nil, err
	}
	s.packRun, s.finished = true, true
	w := ioutil.NewWriteCloserOnError(ioutil.NewContextWriteCloser(ctx, s.stdin), s.onError)
	if err := req.UploadRequest.Encode(w); err != nil {
		return nil, fmt.Errorf("sending upload-req message: %s", err)
	}
	if err := req.UploadHaves.Encode(w, true); err != nil {
		return nil, fmt.Errorf("sending haves message: %s", err)
	}
	if err := pktline.NewEncoder(w).Encodef("done\n"); err != nil {
		return nil, fmt.Errorf("sending done message: %s", err)
	}
	if err := w.Close(); err != nil {
		return nil, fmt.Errorf("closing input: %s", err)
	}
	out := s.stdoutContext(ctx)
	r, err := ioutil.NonEmptyReader(out)
	if err == ioutil.ErrEmptyReader {
		return nil, transport.ErrEmptyUploadPackRequest
	}
	if err != nil {
		return nil, err
	}
	res := packp.NewUploadPackResponse(req)
	if err := res.Decode(ioutil.NewReadCloser(r, s)); err != nil {
		return nil, fmt.Errorf("error decoding upload-pack response: %s", err)
	}
	return res, nil
}

func (s *localSession) stdoutContext(ctx context.Context) io.Reader {
	return ioutil.NewReaderOnError(ioutil.NewContextReader(ctx, s.stdout), s.onError)
}

// onError stops the process after a failed read or write (a cancelled
// context among them).
func (s *localSession) onError(error) {
	s.stop()
	_ = s.Close()
}

// finish tells upload-pack that no request follows (a flush-pkt), unless
// the request was sent.
func (s *localSession) finish() error {
	if s.finished {
		return nil
	}
	s.finished = true
	_, err := s.stdin.Write(pktline.FlushPkt)
	return err
}

// Close ends the session and waits for upload-pack. Its exit status is not
// an error here: a failure was already seen on the protocol stream.
func (s *localSession) Close() error {
	err := s.finish()
	s.wait()
	return err
}

func (s *localSession) wait() {
	if s.closed {
		return
	}
	s.closed = true
	_ = s.stdin.Close()
	s.reap()
}

// isRepoNotFound recognises the messages servers give for a repository
// that is not there (or not readable), as go-git's transports do.
func isRepoNotFound(s string) bool {
	for _, m := range []string{
		"Repository not found.",
		"repository does not exist.",
		"does not appear to be a git repository",
		"no such repository",
		"access denied",
		"Repository does not exist or you do not have access",
		"The project you were looking for could not be found",
	} {
		if strings.Contains(s, m) {
			return true
		}
	}
	return false
}

// firstBytes keeps the first 4 KiB written to it: enough for the line
// that says why upload-pack failed.
type firstBytes struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (f *firstBytes) Write(p []byte) (int, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if room := 4096 - f.b.Len(); room > 0 {
		f.b.Write(p[:min(len(p), room)])
	}
	return len(p), nil
}

// firstLine is the first line that is not one of the "remote:" banners
// go-git skipped ("" when there is none, or when that line is empty).
func (f *firstBytes) firstLine() string {
	f.mu.Lock()
	defer f.mu.Unlock()
	text := f.b.String()
	if text == "" {
		return ""
	}
	for _, line := range strings.Split(strings.TrimSuffix(text, "\n"), "\n") {
		if line = strings.TrimSuffix(line, "\r"); !isRemoteBanner(line) {
			return line
		}
	}
	return ""
}

// isRemoteBanner is go-git's `^remote:( =*){0,1}$`.
func isRemoteBanner(line string) bool {
	rest, ok := strings.CutPrefix(line, "remote:")
	if !ok {
		return false
	}
	if rest == "" {
		return true
	}
	return rest[0] == ' ' && strings.Trim(rest[1:], "=") == ""
}
