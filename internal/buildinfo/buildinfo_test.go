package buildinfo

import (
	"runtime/debug"
	"testing"
)

func TestFrom(t *testing.T) {
	bi := &debug.BuildInfo{
		GoVersion: "go1.26.8",
		Main:      debug.Module{Path: "github.com/readproof/readproof", Version: "v1.2.3"},
		Settings: []debug.BuildSetting{
			{Key: "vcs", Value: "git"},
			{Key: "vcs.revision", Value: "0123456789abcdef0123456789abcdef01234567"},
			{Key: "vcs.time", Value: "2026-12-01T10:00:00Z"},
			{Key: "vcs.modified", Value: "true"},
		},
	}
	got := From(bi, true, Overrides{})
	want := Info{Version: "v1.2.3", Revision: "0123456789abcdef0123456789abcdef01234567", Time: "2026-12-01T10:00:00Z", Modified: true, GoVersion: "go1.26.8"}
	if got != want {
		t.Fatalf("From = %+v, want %+v", got, want)
	}
	if s := got.String(); s != "v1.2.3 (0123456789ab, 2026-12-01T10:00:00Z, modified)" {
		t.Errorf("String = %q", s)
	}
	got = From(bi, true, Overrides{Version: "v9", Revision: "abc", Time: "t", Modified: "false"})
	if got.Version != "v9" || got.Revision != "abc" || got.Time != "t" || got.Modified {
		t.Errorf("overrides not applied: %+v", got)
	}
	got = From(nil, false, Overrides{})
	if got.Version != "(devel)" || got.Revision != "" || got.String() != "(devel)" {
		t.Errorf("no build info: %+v %q", got, got.String())
	}
}
