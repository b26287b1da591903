package gitstore

// Writing a remote's configuration without one git process per key: `git
// remote add` followed by `git config --unset-all` and one `git config
// --add` per fetch refspec cost ten processes. AddRemote asks git once
// whether the name is taken (with git's own scopes and includes) and then
// appends the section to the repository's config file itself, under git's
// lock protocol (config.lock, created exclusively, renamed over config), in
// the bytes those ten commands wrote.

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// remoteTaken reports whether AddRemote must refuse name, as the commands
// it replaces did: remote.<name>.url is set in any configuration scope (what
// `git config --get` found), or the repository's own configuration (local
// or worktree scope) sets any remote.<name>.* key, or a legacy remotes/ or
// branches/ file names it (what makes `git remote add` exit 3).
//
// The same git process lists the url.<base>.insteadOf rules: rewrites
// reports whether one may apply to url (its value is a prefix of url, as
// git matches them, or it has no value), or an include made once a
// remote's URL matches is configured (remoteIncludeKeys: it may hold a
// rule, and the remote added makes git read it), which is when git may
// fetch from another URL than the one configured; a rule whose value is
// no prefix of url (`url."git@github.com:".insteadOf https://github.com/`
// and a clone from a path) never rewrites it. hides reports whether a key
// that leaves a listing to git is set (listingKeys: hideRefs, protocol
// rules).
//
// out is git's output (nil when no key matched): the pushInsteadOf rules
// are listed too, so that with the section AddRemote appends it is what
// readRemoteURLs would read next (seedURLs).
func (t *Transport) remoteTaken(ctx context.Context, name, url string) (taken, rewrites, hides bool, out []byte, err error) {
	for _, legacy := range []string{"remotes", "branches"} {
		if _, err := os.Stat(filepath.Join(t.dir, legacy, name)); err == nil {
			return true, false, false, nil, nil
		}
	}
	out, err = t.remoteConfig(ctx, name)
	if exitCode(err) == 1 { // no key matches
		return false, false, false, nil, nil
	}
	if err != nil {
		return false, false, false, nil, err
	}
	urlKey := "remote." + name + ".url"
	// records: scope NUL key [LF value] NUL
	fields := bytes.Split(out, []byte{0})
	for i := 0; i+1 < len(fields); i += 2 {
		scope := string(fields[i])
		key, value, hasValue := strings.Cut(string(fields[i+1]), "\n")
		if strings.HasPrefix(key, "url.") && strings.HasSuffix(key, ".insteadof") {
			// git rewrites a URL that starts with the rule's value
			if !hasValue || strings.HasPrefix(url, value) {
				rewrites = true
			}
			continue
		}
		if remoteIncludeKey(key) {
			// a file git includes once a remote's URL matches, which may
			// hold a rule
			rewrites = true
			continue
		}
		if listingKey(key) {
			hides = true
			continue
		}
		rest, ok := strings.CutPrefix(key, "remote."+name+".")
		if !ok || strings.Contains(rest, ".") {
			continue
		}
		if key == urlKey || scope == "local" || scope == "worktree" {
			taken = true
		}
	}
	return taken, rewrites, hides, out, nil
}

// seedURLs keeps, for remoteURLsOnce (OneCommand), what readRemoteURLs would read of
// remote name right after AddRemote appended its section to the
// repository's config file: out, remoteTaken's output (the same keys, in
// the same order), followed by the new section's keys in the local scope.
// git lists them after the local keys remoteTaken saw and before those of
// the worktree and command scopes; parseRemoteURLs reads order only among
// urls, among pushurls and among rules, and the section adds no pushurl
// or rule and the remote's only url (any other url, in any scope, made the
// name taken), so where its keys sit changes nothing it reads. Nothing is
// kept when GIT_CONFIG is set (readRemoteURLs leaves that to git).
func (t *Transport) seedURLs(name, url string, fetch []string, out []byte) {
	if gitConfigRedirected() {
		return
	}
	t.urlsMu.Lock()
	defer t.urlsMu.Unlock()
	if !t.keepURLs {
		return
	}
	all := append([]byte(nil), out...)
	add := func(key, value string) {
		all = append(all, "local\x00remote."+name+"."+key+"\n"+value+"\x00"...)
	}
	add("url", url)
	add("tagopt", "--no-tags")
	for _, spec := range fetch {
		add("fetch", spec)
	}
	t.keepURLsOf(name, parseReadURLs(all, name))
}

// remoteSection is the text `git remote add --no-tags NAME URL`, `git config
// --unset-all remote.NAME.fetch` and `git config --add remote.NAME.fetch
// SPEC` (per spec) append to a config file that has no such remote.
func remoteSection(name, url string, fetch []string) string {
	var b strings.Builder
	b.WriteString("[remote \"" + name + "\"]\n")
	writeConfigPair(&b, "url", url)
	writeConfigPair(&b, "tagOpt", "--no-tags")
	for _, spec := range fetch {
		writeConfigPair(&b, "fetch", spec)
	}
	return b.String()
}

// writeConfigPair writes "\tkey = value\n" as git's config writer does: the
// value in double quotes when it starts or ends with a space or holds ';',
// '#' or a carriage return (git quotes that since CVE-2025-48384: a CR
// left bare before the end of the line is dropped when git reads the
// file), with newline, tab, '"' and '\' escaped.
func writeConfigPair(b *strings.Builder, key, value string) {
	quote := ""
	if strings.HasPrefix(value, " ") || strings.HasSuffix(value, " ") || strings.ContainsAny(value, ";#\r") {
		quote = `"`
	}
	b.WriteString("\t" + key + " = " + quote)
	for i := 0; i < len(value); i++ {
		switch c := value[i]; c {
		case '\n':
			b.WriteString(`\n`)
		case '\t':
			b.WriteString(`\t`)
		case '"', '\\':
			b.WriteByte('\\')
			b.WriteByte(c)
		default:
			b.WriteByte(c)
		}
	}
	b.WriteString(quote + "\n")
}

// appendConfig appends text to the repository's config file the way git
// changes it: config.lock is created exclusively (a concurrent `git config`
// or AddRemote fails instead of losing a change), receives the old content
// and text, keeps the old file's permissions, is made durable and renamed
// over config; the directory is synced after.
func (t *Transport) appendConfig(text string) error {
	_, err := t.appendConfigOf(func([]byte) (string, bool) { return text, true })
	return err
}

// appendConfigOf is appendConfig of the text build makes of the config
// file's content, read under the lock; when build declines (false), the
// file is left as it was and appended reports false.
func (t *Transport) appendConfigOf(build func(old []byte) (text string, ok bool)) (appended bool, err error) {
	path := filepath.Join(t.dir, "config")
	mode := fs.FileMode(0o666)
	if fi, err := os.Stat(path); err == nil {
		mode = fi.Mode().Perm()
	} else if !errors.Is(err, fs.ErrNotExist) {
		return false, err
	}
	lock := path + ".lock"
	f, err := os.OpenFile(lock, os.O_WRONLY|os.O_CREATE|os.O_EXCL, mode)
	if err != nil {
		if errors.Is(err, fs.ErrExist) {
			return false, fmt.Errorf("could not lock config file %s: %w: another git or readproof process is changing it; try again, or remove %s if none is running", path, err, lock)
		}
		return false, err
	}
	done := false
	defer func() {
		if !done {
			f.Close()
			os.Remove(lock)
		}
	}()
	// Read under the lock: no other writer's change is lost.
	old, err := os.ReadFile(path)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return false, err
	}
	text, ok := build(old)
	if !ok {
		return false, nil
	}
	var buf bytes.Buffer
	buf.Write(old)
	if len(old) > 0 && old[len(old)-1] != '\n' {
		buf.WriteByte('\n')
	}
	buf.WriteString(text)
	if _, err := f.Write(buf.Bytes()); err != nil {
		return false, err
	}
	if err := f.Chmod(mode); err != nil { // umask narrowed the create
		return false, err
	}
	if err := f.Sync(); err != nil {
		return false, err
	}
	if err := f.Close(); err != nil {
		return false, err
	}
	if err := os.Rename(lock, path); err != nil {
		return false, err
	}
	done = true
	return true, syncDir(t.dir)
}

// RemoteInRepoConfig reports whether the repository's own config file
// sets remote.<name>.url, read here without a git process, in a file whose
// reading leaves no doubt that git knows the remote from it: `git remote
// get-url` and the commands given the remote's name (ls-remote, fetch,
// push) then use its configured URLs. It reports false, and the caller asks
// git, whenever git could read anything else: a line this reader does not
// take apart simply (a quote, a backslash, a continuation, a carriage
// return, the legacy [remote.name] header, a section header with more on
// its line), an include, an [extensions] section (a worktree config), a
// repository whose config lives elsewhere (commondir), configuration from
// the environment (GIT_CONFIG_PARAMETERS, GIT_CONFIG_COUNT, GIT_CONFIG),
// or a url of the remote that is empty or has no value (newer git reads an
// empty url as clearing the list). It says nothing about which URL git
// uses: insteadOf rules of any scope still apply, in git.
func (t *Transport) RemoteInRepoConfig(name string) bool {
	_, ok := t.RemoteInRepoConfigURL(name)
	return ok
}

// RemoteInRepoConfigURL is RemoteInRepoConfig that also returns the first
// url the file sets, as written there (before any insteadOf rule).
func (t *Transport) RemoteInRepoConfigURL(name string) (string, bool) {
	if CheckRemoteName(name) != nil {
		return "", false
	}
	for _, v := range []string{"GIT_CONFIG_PARAMETERS", "GIT_CONFIG_COUNT", "GIT_CONFIG"} {
		if os.Getenv(v) != "" {
			return "", false
		}
	}
	if _, err := os.Lstat(filepath.Join(t.dir, "commondir")); !errors.Is(err, fs.ErrNotExist) {
		return "", false
	}
	data, err := os.ReadFile(filepath.Join(t.dir, "config"))
	if err != nil {
		return "", false
	}
	return simpleConfigURL(data, name)
}

// simpleConfigURL reports whether data, a config file made only of simple
// lines (no quote outside a section header), sets remote.<name>.url to a
// non-empty value (and never to an empty one or to no value), and returns
// the first; false for a file with any other line.
func simpleConfigURL(data []byte, name string) (string, bool) {
	if bytes.ContainsAny(data, "\r\\\x00") || bytes.HasPrefix(data, []byte("\xef\xbb\xbf")) {
		return "", false
	}
	first := ""
	found := false
	inSection, inRemote := false, false
	for _, line := range strings.Split(string(data), "\n") {
		line = strings.TrimLeft(line, " \t")
		if line == "" || line[0] == '#' || line[0] == ';' {
			continue
		}
		if line[0] == '[' {
			section, sub, ok := simpleSectionHeader(line)
			if !ok {
				return "", false
			}
			switch s := strings.ToLower(section); {
			case s == "include" || s == "includeif" || s == "extensions":
				return "", false
			default:
				inSection, inRemote = true, s == "remote" && sub == name
			}
			continue
		}
		if !inSection || strings.ContainsRune(line, '"') {
			return "", false
		}
		key, value, hasValue := strings.Cut(line, "=")
		key = strings.TrimRight(key, " \t")
		if !configKey(key) {
			return "", false
		}
		if !inRemote || !strings.EqualFold(key, "url") {
			continue
		}
		if i := strings.IndexAny(value, "#;"); i >= 0 {
			value = value[:i]
		}
		if !hasValue || strings.Trim(value, " \t") == "" {
			return "", false
		}
		if !found {
			first = strings.Trim(value, " \t")
		}
		found = true
	}
	return first, found
}

// simpleSectionHeader parses `[section]` or `[section "subsection"]` with
// nothing after it but blanks and a comment; the subsection holds no quote
// or backslash (the caller refused a backslash anywhere). The legacy `[section.sub]` form
// is refused.
func simpleSectionHeader(line string) (section, sub string, ok bool) {
	end := strings.IndexByte(line, ']')
	if end < 0 {
		return "", "", false
	}
	if rest := strings.TrimLeft(line[end+1:], " \t"); rest != "" && rest[0] != '#' && rest[0] != ';' {
		return "", "", false
	}
	head := line[1:end]
	section, quoted, hasSub := strings.Cut(head, " ")
	if section == "" || strings.Trim(section, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-") != "" {
		return "", "", false
	}
	if !hasSub {
		return section, "", true
	}
	// git's writer puts one space; the subsection is quoted
	quoted = strings.TrimLeft(quoted, " \t")
	if len(quoted) < 2 || quoted[0] != '"' || quoted[len(quoted)-1] != '"' {
		return "", "", false
	}
	sub = quoted[1 : len(quoted)-1]
	if strings.ContainsRune(sub, '"') {
		return "", "", false
	}
	return section, sub, true
}

// configKey reports whether s is a variable name as git reads one: a
// letter, then letters, digits and '-'.
func configKey(s string) bool {
	if s == "" || !(s[0] >= 'a' && s[0] <= 'z' || s[0] >= 'A' && s[0] <= 'Z') {
		return false
	}
	return strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-") == ""
}

// gitConfigRedirected reports whether GIT_CONFIG is set: `git config`
// alone then reads that file instead of the configuration (git fetch,
// ls-remote and the rest ignore it), so what a `git config` question
// answered of remotes and URL rules is not what git will use, and git is
// left to resolve them itself.
func gitConfigRedirected() bool { return os.Getenv("GIT_CONFIG") != "" }
