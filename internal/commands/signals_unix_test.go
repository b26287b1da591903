//go:build unix

package commands

import (
	"context"
	"syscall"
	"testing"
	"time"
)

// TestInterruptCancels: with the handler in place, SIGINT cancels the
// command's context, as signal.NotifyContext did; after stop, listen
// installs nothing.
func TestInterruptCancels(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	s := &interrupts{cancel: cancel}
	s.listen()
	if err := syscall.Kill(syscall.Getpid(), syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	select {
	case <-ctx.Done():
	case <-time.After(10 * time.Second):
		t.Fatal("SIGINT did not cancel the context")
	}
	if ctx.Err() != context.Canceled {
		t.Errorf("ctx.Err() = %v", ctx.Err())
	}
	s.stop()
	later := &interrupts{cancel: func() {}}
	later.stop()
	later.listen()
	if later.ch != nil {
		t.Error("listen after stop installed a handler")
	}
}
