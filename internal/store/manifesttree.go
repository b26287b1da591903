package store

import (
	"strings"

	"github.com/readproof/readproof/gitstore"
	"github.com/readproof/readproof/manifest"
)

// ManifestTreeExtra returns the path of the first entry of a manifest
// commit's tree (root) that is not part of the run, or "" when there is
// none. Every readproof version wrote exactly manifest.json and each
// entry's File (writeManifestFrom; AssignFiles has placed them under
// content/ since the first format), and the directories that lead to them:
// any other entry (a file no entry records, an empty or extra directory, a
// link, a submodule) would show in `git show` and `git diff` as part of the
// run while replay and evidence ignore it. read lists a tree; only trees
// on the way to an expected file are read, so a manifest that passes reads
// no tree its entries' lookups did not read already.
func ManifestTreeExtra(read func(gitstore.OID) ([]gitstore.TreeEntry, error), root gitstore.OID, entries []manifest.Entry) (string, error) {
	files := make(map[string]bool, len(entries)+1)
	files["manifest.json"] = true
	dirs := map[string]bool{}
	for i := range entries {
		f := entries[i].File
		if f == "" {
			continue
		}
		files[f] = true
		for j := strings.LastIndexByte(f, '/'); j > 0 && !dirs[f[:j]]; j = strings.LastIndexByte(f[:j], '/') {
			dirs[f[:j]] = true // its own prefixes are added by the next steps
		}
	}
	type dir struct {
		id     gitstore.OID
		prefix string
	}
	stack := []dir{{root, ""}}
	for len(stack) > 0 {
		d := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		list, err := read(d.id)
		if err != nil {
			return "", err
		}
		for _, e := range list {
			p := d.prefix + e.Name
			switch {
			case e.Mode == gitstore.ModeFile && files[p]:
			case e.Mode == gitstore.ModeDir && dirs[p]:
				stack = append(stack, dir{e.OID, p + "/"})
			default:
				return p, nil
			}
		}
	}
	return "", nil
}

// ManifestTreeRule says what a manifest's tree holds, for the messages
// that report an entry beyond it.
const ManifestTreeRule = "a manifest's tree holds manifest.json and its entries' files under content/, nothing else"

// ObservationTreeExtra returns the name of the first entry of an
// observation commit's tree (its entries) other than the files content,
// observation.json and resource.json, which every readproof version wrote
// and nothing else (resolve.go), or "": any other entry would show in `git
// show` of the chain as part of the observation while no reader reads it.
func ObservationTreeExtra(entries []gitstore.TreeEntry) string {
	for _, e := range entries {
		if e.Mode == gitstore.ModeFile && (e.Name == "content" || e.Name == "observation.json" || e.Name == "resource.json") {
			continue
		}
		return e.Name
	}
	return ""
}

// ObservationTreeRule says what an observation's tree holds, for the
// messages that report an entry beyond it.
const ObservationTreeRule = "an observation's tree holds content, observation.json and resource.json, nothing else"

// TagTreeExtra returns the name of the first entry of a tag move's tree
// (its entries) other than the files tag.json and content, which every
// readproof version wrote and nothing else (putTagCommit, a pull's merge of
// a tag moved on both sides; a git host's merge of a proposal keeps them),
// or "". A deletion carrying content is verify's own finding.
func TagTreeExtra(entries []gitstore.TreeEntry) string {
	for _, e := range entries {
		if e.Mode == gitstore.ModeFile && (e.Name == "tag.json" || e.Name == "content") {
			continue
		}
		return e.Name
	}
	return ""
}

// TagTreeRule says what a tag move's tree holds, for the messages that
// report an entry beyond it.
const TagTreeRule = "a tag move's tree holds tag.json and, unless it deletes the tag, content, nothing else"

// VerdictTreeExtra returns the name of the first entry of a verdict
// record's tree (its entries) other than the file verdicts.json, the one
// file every readproof version wrote there (probe.go; a sync merge keeps
// a side's tree), or "".
func VerdictTreeExtra(entries []gitstore.TreeEntry) string {
	for _, e := range entries {
		if e.Mode == gitstore.ModeFile && e.Name == verdictsFile {
			continue
		}
		return e.Name
	}
	return ""
}

// VerdictTreeRule says what a verdict record's tree holds, for the
// messages that report an entry beyond it.
const VerdictTreeRule = "a verdict record's tree holds verdicts.json, nothing else"
