package gitstore

import (
	"os"
	"testing"
)

// longTests reports whether the slow tests run at their full size. They do
// with READPROOF_LONG_TESTS=1 (go test ./... takes a few minutes then); by
// default they run a smaller version that exercises the same behaviour.
func longTests() bool { return os.Getenv("READPROOF_LONG_TESTS") != "" }

// testSize is full with READPROOF_LONG_TESTS=1, else small; it logs the
// size it picked so a reader of -v output knows which one ran.
func testSize(t testing.TB, small, full int) int {
	t.Helper()
	if longTests() {
		return full
	}
	t.Logf("size %d (READPROOF_LONG_TESTS=1 runs it with %d)", small, full)
	return small
}
