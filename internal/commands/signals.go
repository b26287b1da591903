package commands

import (
	"context"
	"os"
	"os/signal"
	"sync"
	"syscall"

	"github.com/urfave/cli/v2"
)

// interrupts is what signal.NotifyContext did for Main, started only when
// a command's action begins: SIGINT and SIGTERM cancel the command's
// context (Main then exits 130), and the handler stays until Main returns.
// Installing it costs a process up to three threads (os/signal locks one
// for the signal mask, and its loop holds another) and, in paired runs,
// 7 to 13% of `readproof version`'s task-clock: `version`, `help`, `man`,
// `--help` and shell completion, which never read the context, do not pay
// it.
type interrupts struct {
	cancel context.CancelFunc
	once   sync.Once
	ch     chan os.Signal
	done   chan struct{}
}

// interruptsKey carries Main's *interrupts in the context it runs the app
// with.
type interruptsKey struct{}

// listen installs the handler (once).
func (s *interrupts) listen() {
	s.once.Do(func() {
		s.ch, s.done = make(chan os.Signal, 1), make(chan struct{})
		signal.Notify(s.ch, os.Interrupt, syscall.SIGTERM)
		go func() {
			select {
			case <-s.ch:
				s.cancel()
			case <-s.done:
			}
		}()
	})
}

// stop removes the handler, if listen installed one.
func (s *interrupts) stop() {
	s.once.Do(func() {}) // a listen after stop installs nothing
	if s.ch != nil {
		signal.Stop(s.ch)
		close(s.done)
	}
}

// listening wraps a command's action: the handler is in place before the
// action runs. Outside Main (tests calling the app directly) it does
// nothing.
func listening(action cli.ActionFunc) cli.ActionFunc {
	return func(c *cli.Context) error {
		if s, ok := c.Context.Value(interruptsKey{}).(*interrupts); ok {
			s.listen()
		}
		return action(c)
	}
}
