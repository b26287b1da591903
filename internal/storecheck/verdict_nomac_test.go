package storecheck_test

import (
	"encoding/json"
	"testing"

	"github.com/readproof/readproof/gitstore"
	"github.com/readproof/readproof/internal/store"
	"github.com/readproof/readproof/internal/storecheck"
	"github.com/readproof/readproof/probe"
)

// TestVerifyVerdictWithoutMACNoKey: a verdict record that carries no MAC
// is reported by `readproof verify` whether or not the auditor holds a
// probe key. Before session 30 it was warned of only with a key: without
// one, verify said nothing of it, as if it were a record a key would
// check (rra's re-read; evidence verify already named it both ways).
func TestVerifyVerdictWithoutMACNoKey(t *testing.T) {
	t.Parallel()
	p := probedRun(t)
	recordVerdict(t, p, probe.Keys{})
	keys, err := probe.NewRandomKeys()
	if err != nil {
		t.Fatal(err)
	}
	for _, opts := range []storecheck.Options{{ProbeKeys: &keys}, {}} {
		rep := p.check(t, opts)
		if len(find(rep, storecheck.Warning, "1 verdict record carries no MAC")) != 1 {
			t.Errorf("with key %v: want the record without a MAC named, got:\n%s", opts.ProbeKeys != nil, problems(rep))
		}
	}
}

// TestVerifyNoMACWarningSameWithOrWithoutKey: the warning of verdict
// records without a MAC counts the same records whether or not the
// auditor holds the probe key, and never a record a key would check. A
// record that names a mac_key but whose mac was cut away is one a key
// checks (it fails under the key it names): without the key it is a MAC
// not checked, as evidence verify says, not "recorded before verdict
// records were authenticated". A stripped record (no MAC after one that
// has one) carries no MAC with or without the key. Before this re-read
// mine3 counted the stripped records only with the key, and the cut MAC
// only without it.
func TestVerifyNoMACWarningSameWithOrWithoutKey(t *testing.T) {
	t.Parallel()
	keys, err := probe.NewRandomKeys()
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name   string
		keys   []probe.Keys // of checks 1, 2, ...
		cut    bool         // check 1's mac cut away, its mac_key kept
		noMAC  string       // the warning with and without the key
		notChk string       // the warning without the key
	}{
		{"cut", []probe.Keys{keys, {}}, true, "1 verdict record carries no MAC", "1 verdict record MAC not checked"},
		{"stripped", []probe.Keys{keys, {}, {}}, false, "2 verdict records carry no MAC", "1 verdict record MAC not checked"},
	} {
		p := probedRun(t)
		for i, k := range c.keys {
			recordVerdict(t, p, k)
			if i == 0 && c.cut {
				cutMAC(t, p, store.VerdictsPrefix+"run-p")
			}
		}
		for _, opts := range []storecheck.Options{{ProbeKeys: &keys}, {}} {
			rep := p.check(t, opts)
			if len(find(rep, storecheck.Warning, c.noMAC)) != 1 {
				t.Errorf("%s, with key %v: want %q, got:\n%s", c.name, opts.ProbeKeys != nil, c.noMAC, problems(rep))
			}
			if opts.ProbeKeys == nil && len(find(rep, storecheck.Warning, c.notChk)) != 1 {
				t.Errorf("%s, without key: want %q, got:\n%s", c.name, c.notChk, problems(rep))
			}
			if opts.ProbeKeys != nil && c.cut && len(find(rep, storecheck.Broken, "(check 1)", "fails its MAC")) != 1 {
				t.Errorf("%s, with key: want check 1 broken, got:\n%s", c.name, problems(rep))
			}
		}
	}
}

// cutMAC rewrites the tip of a verdict chain (a chain of one commit)
// without its record's "mac" member, keeping "mac_key".
func cutMAC(t *testing.T, p *project, ref string) {
	t.Helper()
	g := p.s.Git()
	tip, err := g.Ref(ref)
	if err != nil {
		t.Fatal(err)
	}
	c, err := g.Commit(tip)
	if err != nil {
		t.Fatal(err)
	}
	entries, err := g.Tree(c.Tree)
	if err != nil {
		t.Fatal(err)
	}
	for i, e := range entries {
		if e.Name != store.VerdictsFile {
			continue
		}
		data, err := g.Blob(e.OID)
		if err != nil {
			t.Fatal(err)
		}
		var rec map[string]any
		if err := json.Unmarshal(data, &rec); err != nil {
			t.Fatal(err)
		}
		if rec["mac"] == nil || rec["mac_key"] == nil {
			t.Fatalf("record has no mac to cut: %s", data)
		}
		delete(rec, "mac")
		out, err := json.MarshalIndent(rec, "", "  ")
		if err != nil {
			t.Fatal(err)
		}
		if entries[i].OID, err = g.PutBlob(out); err != nil {
			t.Fatal(err)
		}
	}
	if c.Tree, err = g.PutTree(entries); err != nil {
		t.Fatal(err)
	}
	id, err := g.PutCommit(c)
	if err != nil {
		t.Fatal(err)
	}
	if err := g.Update(gitstore.RefUpdate{Name: ref, Old: tip, New: id}); err != nil {
		t.Fatal(err)
	}
}
