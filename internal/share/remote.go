package share

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/readproof/readproof/gitstore"
	"github.com/readproof/readproof/internal/hint"
	"github.com/readproof/readproof/internal/store"
	"github.com/readproof/readproof/internal/text"
)

// Remote is a configured remote: remote.<name>.url in the store's git
// config, so `git remote -v` in the store lists it too.
type Remote struct {
	Name string `json:"name"`
	URL  string `json:"url"`
}

// DisplayURL is the URL with any user:password@ part redacted.
func (r Remote) DisplayURL() string { return gitstore.RedactURL(r.URL) }

// AddRemote configures a remote. Its fetch refspecs map the shared
// namespaces to refs/readproof-remotes/<name>/, so a plain `git fetch NAME`
// in the store only updates the tracking refs.
func AddRemote(ctx context.Context, s *store.Store, name, url string) error {
	if err := gitstore.CheckRemoteName(name); err != nil {
		return err
	}
	// https:/user:pw@host/x (one slash) is a password too, which
	// CheckURLPassword, reading the URL as git does (ssh host "https"),
	// does not see
	if meant, _ := mendScheme(url); meant != "" {
		if err := gitstore.CheckURLPassword(name, meant); err != nil {
			return err
		}
	}
	t, err := Options{}.transport(s.Git())
	if err != nil {
		return err
	}
	if err := t.AddRemote(ctx, name, absLocal(url), fetchRefspecs(name)); err != nil {
		if hint.Of(err) != "" {
			return err
		}
		if errors.Is(err, ErrRemoteExists) {
			return hint.With(err, existsHint(ctx, s, name, absLocal(url)))
		}
		return hint.With(err, "list the remotes with: readproof remote list")
	}
	return nil
}

// existsHint is the hint of AddRemote for name, configured already, given
// url: where name points and how to point it at url instead.
func existsHint(ctx context.Context, s *store.Store, name, url string) string {
	list, err := ListRemotes(ctx, s)
	if err != nil {
		return "list the remotes with: readproof remote list"
	}
	for _, r := range list {
		if r.Name != name {
			continue
		}
		now, want := text.Escape(r.DisplayURL()), text.Escape(gitstore.RedactURL(url))
		if r.URL == url {
			return name + " already points at " + now + ": nothing to do"
		}
		add := "`readproof remote add " + name + " " + text.ShellArg(want) + "`"
		if gitstore.RedactURL(url) != url {
			// pasted, the redacted URL would name a user "[REDACTED]"
			add = "`readproof remote add " + name + " URL` with the URL as you gave it"
		}
		return name + " points at " + now + ": to point it at " + want + ", run `readproof remote rm " + name + "`, then " + add + "; or give this remote another name"
	}
	return "list the remotes with: readproof remote list"
}

// RecordedURL is the URL a remote added, or a store cloned, from url
// records (a local path made absolute), as ListRemotes reads it back.
func RecordedURL(url string) string { return absLocal(url) }

// absLocal makes a local repository path absolute, so the remote works from
// any directory; URLs (scheme://...) and scp-like ssh addresses (host:path)
// are returned unchanged, as git would read them.
func absLocal(url string) string {
	if url == "" || strings.Contains(url, "://") || strings.HasPrefix(url, "-") {
		return url
	}
	if i := strings.IndexByte(url, ':'); i > 0 && !strings.Contains(url[:i], "/") {
		return url // host:path
	}
	abs, err := filepath.Abs(url)
	if err != nil {
		return url
	}
	return abs
}

// ListRemotes lists the configured remotes, sorted by name.
func ListRemotes(ctx context.Context, s *store.Store) ([]Remote, error) {
	t, err := Options{}.transport(s.Git())
	if err != nil {
		return nil, err
	}
	list, err := t.Remotes(ctx)
	if err != nil {
		return nil, err
	}
	out := make([]Remote, len(list))
	for i, r := range list {
		out[i] = Remote{Name: r.Name, URL: r.URL}
	}
	return out, nil
}

// RemoveRemote deletes a remote's configuration and its tracking refs.
// Nothing adopted from it is touched.
func RemoveRemote(ctx context.Context, s *store.Store, name string) error {
	t, err := Options{}.transport(s.Git())
	if err != nil {
		return err
	}
	if err := t.RemoveRemote(ctx, name); err != nil {
		err = fmt.Errorf("remove remote: %w", err)
		if errors.Is(err, gitstore.ErrNoRemote) {
			return hint.With(err, "list the remotes with: readproof remote list")
		}
		return err
	}
	// git removes only refs/remotes/ refs itself.
	g := s.Git()
	refs, err := g.Refs(RemotesPrefix + name + "/")
	if err != nil {
		return err
	}
	var ups []gitstore.RefUpdate
	for _, r := range refs {
		ups = append(ups, gitstore.RefUpdate{Name: r.Name, Old: r.OID})
	}
	if err := g.Update(ups...); err != nil {
		return fmt.Errorf("remove remote %s: drop its tracking refs: %w", name, err)
	}
	return nil
}
