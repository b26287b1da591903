package commands

import (
	"context"
	"io"
	"strings"
	"testing"
)

// TestInterruptsInstalledForActions: the signal handler is in place once a
// command's action runs (here `get`, which fails on its missing argument),
// and not for version, help and man, which never read their context.
func TestInterruptsInstalledForActions(t *testing.T) {
	for _, c := range []struct {
		args   []string
		listen bool
	}{
		{[]string{"readproof", "version"}, false},
		{[]string{"readproof", "help"}, false},
		{[]string{"readproof", "help", "get"}, false},
		{[]string{"readproof", "get", "--help"}, false},
		{[]string{"readproof", "man"}, false},
		{[]string{"readproof", "get"}, true},
		{[]string{"readproof", "tag"}, true},
	} {
		ctx, cancel := context.WithCancel(context.Background())
		s := &interrupts{cancel: cancel}
		app := newApp(strings.NewReader(""), io.Discard, io.Discard)
		_ = app.RunContext(context.WithValue(ctx, interruptsKey{}, s), permute(app, c.args))
		if got := s.ch != nil; got != c.listen {
			t.Errorf("%s: handler installed %v, want %v", strings.Join(c.args, " "), got, c.listen)
		}
		s.stop()
		cancel()
	}
}
