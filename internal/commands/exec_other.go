//go:build !(linux || darwin || freebsd || openbsd || netbsd || dragonfly)

package commands

import (
	"os"
	"os/signal"
	"sync"
	"syscall"
)

// brokerSignals passes interrupts and SIGTERM on to the command; see the
// unix version for the rules there.
func brokerSignals() (<-chan os.Signal, func()) {
	ch := make(chan os.Signal, 16)
	signal.Notify(ch, os.Interrupt, syscall.SIGTERM)
	var once sync.Once
	return ch, func() { once.Do(func() { signal.Stop(ch) }) }
}
