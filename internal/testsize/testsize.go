// Package testsize picks the size of the slow tests. They run at full size
// with READPROOF_LONG_TESTS=1 (go test ./... then takes a few minutes); by
// default they run a smaller version that exercises the same behaviour, so
// the default test run stays fast. Only tests import it.
package testsize

import (
	"os"
	"testing"
)

// Env is the environment variable that selects the full sizes.
const Env = "READPROOF_LONG_TESTS"

// Long reports whether the slow tests run at their full size.
func Long() bool { return os.Getenv(Env) != "" }

// Pick returns full when Long, else small; it logs the size it picked so a
// reader of -v output knows which one ran.
func Pick(t testing.TB, small, full int) int {
	t.Helper()
	if Long() {
		return full
	}
	t.Logf("size %d (%s=1 runs it with %d)", small, Env, full)
	return small
}
