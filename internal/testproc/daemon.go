package testproc

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net"
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

// Daemon is a `git daemon` started in a process group of its own and
// reached through a Front (StartFrontedDaemon).
type Daemon struct {
	cmd   *exec.Cmd
	done  <-chan struct{}
	front *Front
	once  sync.Once
}

// StartFrontedDaemon starts cmd, a `git daemon --verbose ... --port=PORT`
// listening on 127.0.0.1:port, in a process group of its own
// (StartGitDaemon), and a Front to it on a free port of 127.0.0.1: clients
// dial Port, and their exchanges skip the 40 ms delayed-ACK stalls. On an
// error nothing is left running.
func StartFrontedDaemon(cmd *exec.Cmd, port int) (*Daemon, error) {
	OwnGroup(cmd)
	done, err := StartGitDaemon(cmd, 10*time.Second)
	if err != nil {
		return nil, err
	}
	d := &Daemon{cmd: cmd, done: done}
	if d.front, err = StartFront("127.0.0.1:0", fmt.Sprintf("127.0.0.1:%d", port)); err != nil {
		d.Close()
		return nil, fmt.Errorf("front for git daemon: %w", err)
	}
	return d, nil
}

// Port is where clients reach the daemon (its front).
func (d *Daemon) Port() int { return d.front.Port() }

// Close closes the front (a client is refused from then on) and ends the
// daemon with every process it started; later calls do nothing.
func (d *Daemon) Close() {
	d.once.Do(func() {
		if d.front != nil {
			d.front.Close()
		}
		KillGroup(d.cmd)
		<-d.done
	})
}

// StartFrontedDaemonOnFreePort starts the git daemon that cmd(port) makes
// on a port free at the moment, fronted as StartFrontedDaemon does, and
// tries again on another port, five times in all, when the daemon does not
// start: the port can be taken between the look and git's bind (other
// tests, other suites on the machine).
func StartFrontedDaemonOnFreePort(cmd func(port int) *exec.Cmd) (*Daemon, error) {
	var err error
	for try := 0; try < 5; try++ {
		var port int
		if port, err = FreePort(); err != nil {
			return nil, err
		}
		var d *Daemon
		if d, err = StartFrontedDaemon(cmd(port), port); err == nil {
			return d, nil
		}
	}
	return nil, fmt.Errorf("git daemon did not start in 5 tries: %w", err)
}

// FreePort returns a port on 127.0.0.1 that nothing listens on at the
// moment; another process may take it before the caller binds it.
func FreePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}
