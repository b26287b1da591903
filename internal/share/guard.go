package share

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/readproof/readproof/gitstore"
	"github.com/readproof/readproof/identity"
	"github.com/readproof/readproof/internal/hint"
	"github.com/readproof/readproof/internal/store"
)

// emptyTree is the id of git's empty tree (SHA-1 repositories): every
// journal commit has it.
const emptyTree gitstore.OID = "4b825dc642cb6eb9a060e54bf8d69288fbee4904"

// StoreMarker is the trailer on the journal's root commit of stores created
// by this version (docs/store-format.md, "Recognising a store").
const StoreMarker = "Readproof-Store: 1"

// sharedNamespace reports whether a ref on a remote may belong to a
// readproof store: the journal, the shared namespaces, and the local-only
// namespaces a `git push --mirror` of a store carries.
func sharedNamespace(name string) bool {
	return name == store.JournalRef ||
		strings.HasPrefix(name, "refs/heads/readproof/") ||
		strings.HasPrefix(name, "refs/tags/readproof/") ||
		strings.HasPrefix(name, RemotesPrefix) ||
		strings.HasPrefix(name, "refs/readproof-conflicts/")
}

// recognize lists every ref of remote and refuses a repository that is not
// a readproof store (ErrNotStore), before anything is fetched into the
// local store or written to the remote:
//   - no refs at all: an empty repository, fine to push to;
//   - a ref outside readproof's namespaces (a project's branch or tag): not
//     a store;
//   - main: its tip must be a journal commit (empty tree, one of the
//     journal's messages). When the tip is not in the local store and the
//     remote holds nothing else of readproof's, the tip alone is fetched
//     into a temporary repository to look at it.
//
// It returns the remote's shared refs. what names the operation in errors
// ("pull origin").
func recognize(ctx context.Context, g gitstore.Store, t *gitstore.Transport, remote, what string) ([]gitstore.Ref, error) {
	all, err := t.LsRemote(ctx, remote)
	if err != nil {
		return nil, hint.With(fmt.Errorf("%s: %w", what, err),
			"check the remote's URL (`readproof remote list`) and that git can reach it: git --git-dir "+g.Path()+" ls-remote "+remote)
	}
	var foreign []string
	var main gitstore.OID
	others := 0
	var shared []gitstore.Ref
	for _, r := range all {
		switch {
		case r.Name == store.JournalRef:
			main = r.OID
		case !sharedNamespace(r.Name):
			foreign = append(foreign, r.Name)
			continue
		default:
			others++
		}
		if strings.HasPrefix(r.Name, "refs/heads/") || strings.HasPrefix(r.Name, "refs/tags/readproof/") {
			shared = append(shared, r)
		}
	}
	if len(foreign) > 0 {
		return nil, notStore(remote, what, fmt.Sprintf("it has refs outside readproof's namespaces: %s", summarize(foreign, 3)))
	}
	if main == "" {
		return shared, nil
	}
	var why error
	if ok, err := g.Has(main); err != nil {
		return nil, err
	} else if ok {
		c, err := g.Commit(main)
		if err != nil {
			why = err
		} else {
			why = journalShape(c.Tree == emptyTree, len(c.Parents), c.Message)
		}
	} else if others == 0 {
		raw, entries, err := t.ProbeCommit(ctx, remote, store.JournalRef)
		if err != nil {
			return nil, hint.With(fmt.Errorf("%s: %w", what, err),
				"check the remote's URL (`readproof remote list`) and that git can reach it: git --git-dir "+g.Path()+" ls-remote "+remote)
		}
		parents, msg := parseRawCommit(raw)
		why = journalShape(entries == 0, parents, msg)
	}
	if why != nil {
		return nil, notStore(remote, what, fmt.Sprintf("its main (%s) is not a readproof journal: %v", main, why))
	}
	return shared, nil
}

func notStore(remote, what, why string) error {
	return hint.With(fmt.Errorf("%s: %w: %s; nothing was fetched or sent", what, ErrNotStore, why),
		"point the remote at a readproof store: a new one from `readproof remote init PATH`, an empty bare repository, or a clone of a store (`readproof remote rm "+remote+"`, then `readproof remote add "+remote+" URL`)")
}

// parseRawCommit returns the parent count and the message of a commit in
// git's raw form.
func parseRawCommit(raw []byte) (parents int, message string) {
	head, msg, _ := strings.Cut(string(raw), "\n\n")
	for _, l := range strings.Split(head, "\n") {
		if strings.HasPrefix(l, "parent ") {
			parents++
		}
	}
	return parents, msg
}

// journalShape checks one commit against the journal's forms
// (docs/store-format.md): the empty tree, and a message and parent count of
// a store's root, a recorded run, a rename or a merge of journals.
func journalShape(emptyTree bool, parents int, message string) error {
	if !emptyTree {
		return fmt.Errorf("its tree is not empty")
	}
	first, _, _ := strings.Cut(message, "\n")
	ok := false
	switch {
	case first == "initialize readproof store":
		ok = parents == 0
	case strings.HasPrefix(first, "record run "):
		ok = (parents == 1 || parents == 2) && identity.ValidateRunID(strings.TrimPrefix(first, "record run ")) == nil
	case strings.HasPrefix(first, "rename run "):
		ok = parents <= 1
	case first == "merge journals":
		ok = parents == 2
	case strings.HasPrefix(first, "record check "):
		// A proof-of-read check (docs/store-format.md, "Journal"): the
		// second parent is the verdict commit.
		run, n, cut := strings.Cut(strings.TrimPrefix(first, "record check "), " ")
		ok = cut && parents == 2 && identity.ValidateRunID(run) == nil && positiveInt(n)
	default:
		return fmt.Errorf("message %q is not a journal record", truncateLine(first))
	}
	if !ok {
		return fmt.Errorf("%q with %d parents is not a journal record", truncateLine(first), parents)
	}
	return nil
}

func positiveInt(s string) bool {
	n, err := strconv.Atoi(s)
	return err == nil && n > 0 && strconv.Itoa(n) == s
}

func truncateLine(s string) string {
	if len(s) > 60 {
		return s[:60] + "…"
	}
	return s
}

// warnHead returns a warning when the remote holds main (hasMain) but its
// HEAD names another branch, or one the remote lacks: a plain `git clone`
// of it would then not check out the journal. git lists HEAD only when it
// names an existing ref, so "no HEAD listed" counts as another branch.
func warnHead(ctx context.Context, t *gitstore.Transport, remote string, hasMain bool) []string {
	if !hasMain {
		return []string{}
	}
	head, err := t.RemoteHead(ctx, remote)
	if err != nil || head == store.JournalRef {
		return []string{}
	}
	what := "a branch it does not have"
	if head != "" {
		what = head
	}
	return []string{fmt.Sprintf("%s's HEAD names %s, not %s: a plain `git clone` of it will not check out the journal; on the server run: git symbolic-ref HEAD %s",
		remote, what, store.JournalRef, store.JournalRef)}
}
