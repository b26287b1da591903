//go:build unix

package mcpserver_test

import (
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// TestEvidenceExportSignersFIFO: a [signing] allowed_signers that names a
// FIFO is answered with the unreadable-file warning, not a call that waits
// forever at the FIFO's open for a writer that never comes (the tool read
// the file with a plain open until session 29, where the command had
// fspath.ReadRegular).
func TestEvidenceExportSignersFIFO(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("needs git")
	}
	p := demoProject(t)
	key := filepath.Join(p.home, "signing")
	p.cli(t, "key", "init", "--principal", "signer@example.com", "--key", key)
	p.extra = append(p.extra, "READPROOF_SIGNING_KEY="+key)
	p.cli(t, "run", "--id", "run-a", refundsURI)
	trustSignersFile(t, p)
	if err := syscall.Mkfifo(filepath.Join(p.dir, "allowed_signers"), 0o644); err != nil {
		t.Skipf("no FIFO here: %v", err)
	}
	s := p.serve(t)
	done := make(chan string, 1)
	go func() {
		res := s.call(t, "readproof_evidence_export", map[string]any{"target": "run-a"})
		if res.IsError {
			done <- "error: " + text(res)
			return
		}
		done <- text(res)
	}()
	select {
	case out := <-done:
		mustContain(t, "signers warning", out, "Warning: the [signing] allowed_signers file of the server's readproof.toml cannot be read, so the manifest commit's signer was not checked against it")
	case <-time.After(60 * time.Second):
		t.Fatal("readproof_evidence_export waits at the allowed_signers FIFO (a hang, not a warning)")
	}
}
