//go:build linux || darwin || freebsd || openbsd || netbsd || dragonfly

package commands

import (
	"os"
	"os/signal"
	"sync"
	"syscall"

	"golang.org/x/sys/unix"
)

// brokerSignals catches the signals that would end readproof exec before
// it records the receipt, and returns those to pass on to the command.
//
//   - SIGTERM is always passed on.
//   - SIGINT, SIGQUIT and SIGHUP are passed on unless readproof runs in the
//     foreground of a terminal: the terminal then sends them to the whole
//     foreground process group, the command included, and a second copy
//     could cut short the command's own handling of the first.
//   - SIGPIPE is caught so that a write to a closed stdout fails with EPIPE
//     instead of killing readproof; the command meets the closed pipe itself.
//
// stop restores the previous handling; call it after the receipt is stored.
func brokerSignals() (<-chan os.Signal, func()) {
	in := make(chan os.Signal, 16)
	signal.Notify(in, syscall.SIGTERM, syscall.SIGINT, syscall.SIGQUIT, syscall.SIGHUP, syscall.SIGPIPE)
	out := make(chan os.Signal, 16)
	fg := terminalForeground()
	done := make(chan struct{})
	go func() {
		for {
			select {
			case <-done:
				return
			case s := <-in:
				switch s {
				case syscall.SIGPIPE:
					continue
				case syscall.SIGINT, syscall.SIGQUIT, syscall.SIGHUP:
					if fg {
						continue
					}
				}
				select {
				case out <- s:
				case <-done:
					return
				}
			}
		}
	}()
	var once sync.Once
	return out, func() {
		once.Do(func() {
			signal.Stop(in)
			close(done)
		})
	}
}

// terminalForeground reports whether readproof's process group is the
// foreground group of the terminal on stdin, stdout or stderr.
func terminalForeground() bool {
	pg := unix.Getpgrp()
	for _, fd := range []int{0, 1, 2} {
		if fg, err := unix.IoctlGetInt(fd, unix.TIOCGPGRP); err == nil {
			return fg == pg
		}
	}
	return false
}
