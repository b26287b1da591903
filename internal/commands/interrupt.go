package commands

import (
	"context"
	"errors"
	"fmt"

	"github.com/readproof/readproof/internal/hint"
)

// interruptible runs fn, read-only work on an open store (replay, evidence
// export and verify), and returns its error; when ctx ends first (SIGINT,
// SIGTERM) it returns at once with an interrupted error (exit 130) and
// leaves fn behind: the process exits next, and nothing was written. fn
// checks ctx in its loops too, so a library user of the same code stops.
func interruptible(ctx context.Context, fn func() error) error {
	done := make(chan error, 1)
	go func() { done <- fn() }()
	select {
	case err := <-done:
		if ctx.Err() != nil {
			return interrupted(ctx)
		}
		return err
	case <-ctx.Done():
		return interrupted(ctx)
	}
}

// interrupted is the error of work stopped by a signal: exit 130.
func interrupted(ctx context.Context) error {
	return withCode(ExitInterrupted, hint.With(fmt.Errorf("interrupted: %w", ctx.Err()), "nothing was written; run the command again to finish it"))
}

// readingInterrupted is err, of a command that records what it read in one
// store commit after every read (`run --id`, `run mount` of several URIs),
// as an interruption when a signal stopped a read: the source's error
// named the document being read ("cancelled (context canceled)"), which
// was not at fault, and nothing of the call was recorded.
func readingInterrupted(ctx context.Context, what, nothing string, err error) error {
	if err == nil || ctx.Err() == nil || !errors.Is(err, context.Canceled) {
		return err
	}
	return withCode(ExitInterrupted, hint.With(fmt.Errorf("%s: interrupted while reading the documents: %w", what, err),
		nothing+" (every document of the call is recorded in one store commit, after all are read); run the command again"))
}
