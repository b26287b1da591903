package testproc

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"strings"
	"sync"
	"time"
)

// StartGitDaemon starts cmd, a `git daemon --verbose ...` with no Stderr
// set, and returns once the daemon said it listens: git prints "Ready to
// rumble" only after every socket is bound. Dialling the port instead can
// reach another test's daemon that holds the same port for a moment, and
// the test then talks to a server that goes away with that other test.
// exited is closed once the daemon has ended (its stderr is read, and
// dropped, until then). On an error the daemon is not running any more:
// err carries what it printed, e.g. that the port was taken.
func StartGitDaemon(cmd *exec.Cmd, timeout time.Duration) (exited <-chan struct{}, err error) {
	if !strings.Contains(strings.Join(cmd.Args, " "), "--verbose") {
		return nil, errors.New("git daemon: start it with --verbose, which prints the line that says it listens")
	}
	r, err := cmd.StderrPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	ready, done := make(chan struct{}), make(chan struct{})
	var mu sync.Mutex
	var said []string
	go func() {
		sc := bufio.NewScanner(r)
		isReady := false
		for sc.Scan() {
			line := sc.Text()
			if !isReady && strings.HasSuffix(line, "Ready to rumble") {
				isReady = true
				close(ready)
				continue
			}
			if !isReady {
				mu.Lock()
				said = append(said, line)
				mu.Unlock()
			}
		}
		io.Copy(io.Discard, r)
		cmd.Wait()
		close(done)
	}()
	select {
	case <-ready:
		return done, nil
	case <-done:
	case <-time.After(timeout):
		cmd.Process.Kill()
		<-done
	}
	mu.Lock()
	defer mu.Unlock()
	return nil, fmt.Errorf("git daemon did not start: %s", strings.Join(said, "; "))
}
