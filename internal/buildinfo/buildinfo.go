// Package buildinfo says which build of readproof is running: the module
// version, the VCS revision and commit time, and whether the work tree had
// uncommitted changes, as the Go toolchain stamped them into the binary
// (runtime/debug.ReadBuildInfo, with -buildvcs).
//
// A packager overrides any of them at link time:
//
//	go build -ldflags "-X github.com/readproof/readproof/internal/buildinfo.version=v1.2.3 \
//	  -X github.com/readproof/readproof/internal/buildinfo.revision=abc123 \
//	  -X github.com/readproof/readproof/internal/buildinfo.vcsTime=2026-12-01T00:00:00Z \
//	  -X github.com/readproof/readproof/internal/buildinfo.modified=false"
//
// It is a leaf: it imports nothing of the module.
package buildinfo

import (
	"runtime/debug"
	"sync"
)

// Link-time overrides (-ldflags -X); empty means "from the build info".
// They are set only by the linker, never at run time.
var (
	version  string
	revision string
	vcsTime  string
	modified string
)

// Info is one build's identity. Its JSON form is what `readproof version
// --json` prints; fields are only ever added.
type Info struct {
	Version   string `json:"version"`            // module version: v1.2.3, a pseudo-version, or "(devel)"
	Revision  string `json:"revision,omitempty"` // VCS revision (git commit id)
	Time      string `json:"time,omitempty"`     // VCS commit time, RFC 3339
	Modified  bool   `json:"modified"`           // the work tree had uncommitted changes
	GoVersion string `json:"go_version"`         // the toolchain that built the binary
}

// Read returns the running binary's build information, with the link-time
// overrides applied.
func Read() Info { return read() }

// read is Read's value, worked out once per process: the build
// information does not change while the program runs, and parsing it is a
// noticeable part of a short command's start.
var read = sync.OnceValue(func() Info {
	bi, ok := debug.ReadBuildInfo()
	return From(bi, ok, Overrides{Version: version, Revision: revision, Time: vcsTime, Modified: modified})
})

// Overrides are values given at link time; an empty field keeps the build
// info's value. Modified is "true" or "false".
type Overrides struct {
	Version, Revision, Time, Modified string
}

// From builds an Info from bi (ok false: no build info) and the overrides.
func From(bi *debug.BuildInfo, ok bool, o Overrides) Info {
	info := Info{Version: "(devel)"}
	if ok && bi != nil {
		if v := bi.Main.Version; v != "" {
			info.Version = v
		}
		info.GoVersion = bi.GoVersion
		for _, s := range bi.Settings {
			switch s.Key {
			case "vcs.revision":
				info.Revision = s.Value
			case "vcs.time":
				info.Time = s.Value
			case "vcs.modified":
				info.Modified = s.Value == "true"
			}
		}
	}
	if o.Version != "" {
		info.Version = o.Version
	}
	if o.Revision != "" {
		info.Revision = o.Revision
	}
	if o.Time != "" {
		info.Time = o.Time
	}
	switch o.Modified {
	case "true":
		info.Modified = true
	case "false":
		info.Modified = false
	}
	return info
}

// String is the one-line form: "v1.2.3 (abc123def456, 2026-12-01T00:00:00Z, modified)".
func (i Info) String() string {
	s := i.Version
	var extra []string
	if i.Revision != "" {
		r := i.Revision
		if len(r) > 12 {
			r = r[:12]
		}
		extra = append(extra, r)
	}
	if i.Time != "" {
		extra = append(extra, i.Time)
	}
	if i.Modified {
		extra = append(extra, "modified")
	}
	if len(extra) > 0 {
		s += " ("
		for j, e := range extra {
			if j > 0 {
				s += ", "
			}
			s += e
		}
		s += ")"
	}
	return s
}
