package gitstore

// A remote's URLs from one `git config` process. `git remote get-url`,
// `git remote get-url --push --all`, `git config --get` and `git ls-remote
// --get-url` each read the whole configuration again; the keys they read
// are listed here once, with their scopes, and git's rules are applied as
// git's remote.c applies them (git 2.39 to 2.45 alike):
//
//   - the fetch URL is the remote's first url, rewritten by the
//     url.<base>.insteadOf rule with the longest matching prefix (the
//     first such rule in configuration order on a tie; rules with the same
//     base form one rule, at the place its base first appears);
//   - the push URLs are its pushurls, each rewritten by insteadOf; without
//     pushurls, every url that a url.<base>.pushInsteadOf rule matches,
//     rewritten by that rule; when none matches, the fetch URLs;
//   - `git remote get-url` knows only a remote configured in the
//     repository (any remote.<name>.* key in the local or worktree scope);
//     `git config --get` gives the last url of any scope.
//
// Whatever these rules do not settle is left to git, as before: a key
// without a value, an empty url, pushurl or rule, a value holding a
// newline, a remote with no url, a remote named by a file under remotes/
// or branches/ (git's legacy remotes), GIT_CONFIG set (it redirects `git
// config` alone), a git that failed.

import (
	"bytes"
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// remoteURLs is what git's configuration says of one remote.
type remoteURLs struct {
	inRepo   bool     // some remote.<name>.* key is in the local or worktree scope
	urls     []string // remote.<name>.url, in configuration order
	pushURLs []string // remote.<name>.pushurl, in configuration order
	// insteadOf and pushInsteadOf rules, in git's order
	rewrites, pushRewrites []urlRewrite
	// gitLists: transfer.hideRefs or uploadpack.hideRefs is set in some
	// scope (upload-pack may advertise less than a repository holds), or
	// protocol.allow or protocol.file.allow (git may refuse a local path):
	// a listing is left to git
	gitLists bool
}

// urlRewrite is one url.<base> section: its insteadOf (or pushInsteadOf)
// prefixes in configuration order.
type urlRewrite struct {
	base     string
	prefixes []string
}

// urlAnswer says how far readRemoteURLs settled a remote's URLs.
type urlAnswer int

const (
	urlsAskGit urlAnswer = iota // not settled: ask git as before
	urlsKnown                   // the remote has URLs, as read
	urlsNone                    // the remote is not configured at all
)

// readRemoteURLs lists the remote's keys and the url rewriting rules in one
// git process. It answers urlsAskGit when the rules above do not settle
// the answer (or git failed): the caller then asks git as before.
func (t *Transport) readRemoteURLs(ctx context.Context, name string) (remoteURLs, urlAnswer) {
	c := t.readURLsOf(ctx, name)
	if c.set {
		t.listAt = c.listAt
	}
	return c.r, c.answer
}

// readURLs is one remote's answer of readRemoteURLs; set says whether the
// read tells where the remote is listed (listAt, what it sets t.listAt
// to): it does when git was asked.
type readURLs struct {
	r      remoteURLs
	answer urlAnswer
	set    bool
	listAt listTarget
}

// readURLsOf is readRemoteURLs without changing the transport.
func (t *Transport) readURLsOf(ctx context.Context, name string) readURLs {
	if gitConfigRedirected() {
		return readURLs{answer: urlsAskGit}
	}
	for _, legacy := range []string{"remotes", "branches"} {
		if _, err := os.Lstat(filepath.Join(t.dir, legacy, name)); !errors.Is(err, fs.ErrNotExist) {
			return readURLs{answer: urlsAskGit}
		}
	}
	out, err := t.remoteConfig(ctx, name)
	if err != nil && exitCode(err) != 1 { // 1: no key matched
		return readURLs{answer: urlsAskGit}
	}
	return parseReadURLs(out, name)
}

// remoteConfig runs the one `git config` that every question about remote
// name reads: its keys (remote.<name>.<key>; a subsection "<name>.x" is
// another remote), every insteadOf and pushInsteadOf rule and the keys
// that leave a listing to git, with their scopes (records: scope NUL key
// [LF value] NUL). Exit code 1 is no key matched. It lists the includes
// made only when a remote's URL matches (includeIf "hasconfig:remote.*.url:"
// .path) too: what such a file holds (a rule) changes once a remote is
// added, so the answer is left to git (parseRemoteURLs does not know the
// key), and a new remote's URL is not resolved here (remoteTaken).
func (t *Transport) remoteConfig(ctx context.Context, name string) ([]byte, error) {
	pattern := `^(remote\.` + strings.ReplaceAll(name, ".", `\.`) + `\.[^.]+|url\..*\.(insteadof|pushinsteadof)|` + listingKeys + `|` + remoteIncludeKeys + `)$`
	return t.run(ctx, false, "config", "--show-scope", "--null", "--get-regexp", pattern)
}

// parseReadURLs is readURLsOf's answer from remoteConfig's output out.
func parseReadURLs(out []byte, name string) readURLs {
	r, answer := parseRemoteURLs(out, name)
	c := readURLs{r: r, answer: answer, set: true}
	if answer == urlsKnown && !r.gitLists {
		c.listAt = listTarget{name: name, url: r.fetchURL()}
	}
	return c
}

// keepURLsOf keeps c as remote name's answer; t.urlsMu is held.
func (t *Transport) keepURLsOf(name string, c readURLs) {
	if t.urls == nil {
		t.urls = map[string]readURLs{}
	}
	t.urls[name] = c
}

// remoteURLsOnce is readRemoteURLs asked once per remote for the
// transport's life when it serves one command (OneCommand): a push asked for the push URLs
// (PushTargets) and then for the fetch URL to probe the remote's journal
// (RemoteFetchURL), each a `git config` that reads every scope again. The
// one output answers every later question as it answered the first
// (nothing between two questions of one command changes the
// configuration but the transport's own writes, which forget it:
// forgetURLs). A read that a cancelled context cut short is not kept.
func (t *Transport) remoteURLsOnce(ctx context.Context, name string) (remoteURLs, urlAnswer) {
	t.urlsMu.Lock()
	defer t.urlsMu.Unlock()
	c, ok := t.urls[name]
	if !ok {
		c = t.readURLsOf(ctx, name)
		if t.keepURLs && ctx.Err() == nil {
			t.keepURLsOf(name, c)
		}
	}
	if c.set {
		t.listAt = c.listAt
	}
	return c.r, c.answer
}

// forgetURLs drops what remoteURLsOnce read: the transport is about to
// change the configuration.
func (t *Transport) forgetURLs() {
	t.urlsMu.Lock()
	t.urls, t.proxies = nil, nil
	t.urlsMu.Unlock()
}

// remoteIncludeKeys are the keys (a regexp, as `git config` prints them)
// of includes made when a remote's URL matches a pattern.
const remoteIncludeKeys = `includeif\.hasconfig:remote\.\*\.url:.*\.path`

// remoteIncludeKey reports whether key is one of remoteIncludeKeys.
func remoteIncludeKey(key string) bool {
	return strings.HasPrefix(key, "includeif.hasconfig:remote.*.url:") && strings.HasSuffix(key, ".path")
}

// listingKeys are the keys (a regexp of them, as `git config` prints them)
// that leave a listing to git: hidden refs, and rules on which protocols
// git uses.
const listingKeys = `(transfer|uploadpack)\.hiderefs|protocol\.(allow|file\.allow)`

func listingKey(key string) bool {
	switch key {
	case "transfer.hiderefs", "uploadpack.hiderefs", "protocol.allow", "protocol.file.allow":
		return true
	}
	return false
}

// listTarget is the URL git lists a remote at (`git ls-remote NAME`), as
// the last `git config` of the transport settled it, when no hideRefs rule
// is configured: LsRemoteHead and RemoteHead read such a repository on
// this machine in place (listLocal).
type listTarget struct {
	name, url string
}

// parseRemoteURLs reads `git config --show-scope --null --get-regexp`
// output (records: scope NUL key LF value NUL; a key without a value has no
// LF) for the remote name.
func parseRemoteURLs(out []byte, name string) (remoteURLs, urlAnswer) {
	var r remoteURLs
	fields := bytes.Split(out, []byte{0})
	if len(fields)%2 != 1 || len(fields[len(fields)-1]) != 0 {
		return r, urlsAskGit
	}
	remoteKeys := false
	prefix := "remote." + name + "."
	for i := 0; i+1 < len(fields); i += 2 {
		scope := string(fields[i])
		key, value, hasValue := strings.Cut(string(fields[i+1]), "\n")
		if !hasValue || value == "" || strings.ContainsAny(value, "\n\x00") {
			return r, urlsAskGit
		}
		if sub, ok := strings.CutPrefix(key, prefix); ok {
			if strings.Contains(sub, ".") {
				return r, urlsAskGit // the regexp allows no such key
			}
			remoteKeys = true
			if scope == "local" || scope == "worktree" {
				r.inRepo = true
			}
			switch sub {
			case "url":
				r.urls = append(r.urls, value)
			case "pushurl":
				r.pushURLs = append(r.pushURLs, value)
			}
			continue
		}
		if listingKey(key) {
			r.gitLists = true
			continue
		}
		rest, ok := strings.CutPrefix(key, "url.")
		if !ok {
			return r, urlsAskGit
		}
		list := &r.rewrites
		base, isRule := strings.CutSuffix(rest, ".insteadof")
		if !isRule {
			if base, isRule = strings.CutSuffix(rest, ".pushinsteadof"); !isRule {
				return r, urlsAskGit
			}
			list = &r.pushRewrites
		}
		if base == "" {
			return r, urlsAskGit
		}
		addRewrite(list, base, value)
	}
	switch {
	case !remoteKeys:
		return r, urlsNone
	case len(r.urls) == 0:
		return r, urlsAskGit // git makes a URL of the name of a remote it knows without one
	}
	return r, urlsKnown
}

// addRewrite adds prefix to the rule of base, made at the end of list
// when base is new (git's make_rewrite).
func addRewrite(list *[]urlRewrite, base, prefix string) {
	for i := range *list {
		if (*list)[i].base == base {
			(*list)[i].prefixes = append((*list)[i].prefixes, prefix)
			return
		}
	}
	*list = append(*list, urlRewrite{base: base, prefixes: []string{prefix}})
}

// rewriteURL applies the rule with the longest prefix of url (the first
// one on a tie), as git's alias_url does; matched reports whether any did.
func rewriteURL(url string, rules []urlRewrite) (string, bool) {
	best, bestLen := -1, -1
	for i, r := range rules {
		for _, p := range r.prefixes {
			if strings.HasPrefix(url, p) && len(p) > bestLen {
				best, bestLen = i, len(p)
			}
		}
	}
	if best < 0 {
		return url, false
	}
	return rules[best].base + url[bestLen:], true
}

// fetchURL is the URL git fetches from: the first url, rewritten.
func (r remoteURLs) fetchURL() string {
	u, _ := rewriteURL(r.urls[0], r.rewrites)
	return u
}

// lastURL is what `git config --get remote.<name>.url` prints.
func (r remoteURLs) lastURL() string { return r.urls[len(r.urls)-1] }

// pushTo is what `git remote get-url --push --all` prints.
func (r remoteURLs) pushTo() []string {
	var out []string
	if len(r.pushURLs) > 0 {
		for _, u := range r.pushURLs {
			w, _ := rewriteURL(u, r.rewrites)
			out = append(out, w)
		}
		return out
	}
	for _, u := range r.urls {
		if w, ok := rewriteURL(u, r.pushRewrites); ok {
			out = append(out, w)
		}
	}
	if len(out) > 0 {
		return out
	}
	for _, u := range r.urls {
		w, _ := rewriteURL(u, r.rewrites)
		out = append(out, w)
	}
	return out
}
