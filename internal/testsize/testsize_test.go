package testsize

import "testing"

func TestPick(t *testing.T) {
	t.Setenv(Env, "")
	if got := Pick(t, 3, 30); got != 3 {
		t.Fatalf("default: Pick = %d, want the small size 3", got)
	}
	t.Setenv(Env, "1")
	if !Long() {
		t.Fatalf("%s=1: Long() = false", Env)
	}
	if got := Pick(t, 3, 30); got != 30 {
		t.Fatalf("%s=1: Pick = %d, want the full size 30", Env, got)
	}
}
