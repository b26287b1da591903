package gitstore

// The known_hosts files an ssh fetch checks the server's host key
// against, as OpenSSH 9.2 picks them for the host (readconf.c,
// fill_default_options; ssh.c, main) and reads them (hostfile.c,
// load_hostkeys).

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/user"
	"path/filepath"
	"slices"
	"strings"

	"github.com/kevinburke/ssh_config"
	"golang.org/x/crypto/ssh"

	"github.com/readproof/readproof/internal/hint"
)

// maxSSHHostsFiles is OpenSSH's bound on the files a UserKnownHostsFile
// or GlobalKnownHostsFile line names (ssh.h, SSH_MAX_HOSTS_FILES).
const maxSSHHostsFiles = 32

// knownHostsFiles are the known_hosts files ssh reads for a host the
// configuration gives no UserKnownHostsFile or GlobalKnownHostsFile for:
// those SSH_KNOWN_HOSTS lists (readproof's, as go-git's), else
// ~/.ssh/known_hosts and ~/.ssh/known_hosts2, ~ the home directory
// ~/.ssh/config is read from (the passwd entry's, as ssh reads both:
// sshUserHome), then /etc/ssh/ssh_known_hosts and
// /etc/ssh/ssh_known_hosts2.
func (c *SSHConfig) knownHostsFiles() []string {
	if files := filepath.SplitList(os.Getenv("SSH_KNOWN_HOSTS")); len(files) > 0 {
		return files
	}
	return append(c.defaultUserKnownHosts(), defaultGlobalKnownHosts...)
}

// defaultGlobalKnownHosts are ssh's system-wide known_hosts files.
var defaultGlobalKnownHosts = []string{"/etc/ssh/ssh_known_hosts", "/etc/ssh/ssh_known_hosts2"}

// defaultUserKnownHosts are ssh's known_hosts files under the home
// directory; none when it is not known.
func (c *SSHConfig) defaultUserKnownHosts() []string {
	if c.home == "" {
		return nil
	}
	return []string{filepath.Join(c.home, ".ssh", "known_hosts"), filepath.Join(c.home, ".ssh", "known_hosts2")}
}

// knownHostsFor are the known_hosts files ssh reads for a fetch of alias
// (the host as the URL names it) at host and port as remoteUser, in its
// order: the user's, then the system's. The user's are those the first
// UserKnownHostsFile line for alias names, each with ~ and the tokens
// and ${NAME} of an IdentityFile expanded (expandIdentityPathFor), none
// for "none" (in any case), else ~/.ssh/known_hosts and known_hosts2;
// the system's those the first GlobalKnownHostsFile line names, ~ alone
// expanded, none for "none", else /etc/ssh/ssh_known_hosts and
// ssh_known_hosts2. SSH_KNOWN_HOSTS, when set, stands for both. An error
// is a line ssh refuses for this host, naming it: a token or variable it
// does not expand, a user it does not know, more than 32 files.
func (c *SSHConfig) knownHostsFor(alias, host, port, remoteUser string) ([]string, error) {
	files, _, err := c.knownHostsWritten(alias, host, port, remoteUser)
	return files, err
}

// knownHostsWritten is knownHostsFor, with each file expanded from a
// ${NAME} mapped to the path as the line writes it: what a message says
// of the files shows no variable's value, as for an IdentityFile
// (keysAt), since an MCP client or an evidence bundle may receive it.
func (c *SSHConfig) knownHostsWritten(alias, host, port, remoteUser string) (files []string, written map[string]string, err error) {
	userFiles, global, written, err := c.knownHostsSplit(alias, host, port, remoteUser)
	return append(userFiles, global...), written, err
}

// knownHostsSplit is knownHostsWritten, the user's files apart from the
// system's (all of them the user's under SSH_KNOWN_HOSTS).
func (c *SSHConfig) knownHostsSplit(alias, host, port, remoteUser string) (userFiles, global []string, written map[string]string, err error) {
	if files := filepath.SplitList(os.Getenv("SSH_KNOWN_HOSTS")); len(files) > 0 {
		return files, nil, nil, nil
	}
	written = map[string]string{}
	userFiles, err = c.knownHostsLine(alias, "UserKnownHostsFile", c.defaultUserKnownHosts(), written, func(v string) (string, error) {
		return expandIdentityPathFor(v, identityTokens{home: c.home, localUser: localUserName(), host: host, remoteUser: remoteUser,
			alias: alias, keyAlias: c.hostKeyAlias(alias), port: port})
	})
	if err != nil {
		return nil, nil, nil, err
	}
	global, err = c.knownHostsLine(alias, "GlobalKnownHostsFile", defaultGlobalKnownHosts, written, func(v string) (string, error) {
		return expandTildeOnly(v, c.home)
	})
	if err != nil {
		return nil, nil, nil, err
	}
	return userFiles, global, written, nil
}

// knownHostsLine are the files the first line giving key for alias
// names, each expanded (those expanded from a ${NAME} added to written,
// each to the word as written); defaults when no line gives it. A line whose
// words are a comment alone (UserKnownHostsFile # old) gives nothing:
// ssh leaves the setting to the next line (readconf.c,
// parse_char_array), where firstSet would stop at it and read the
// defaults, ~/.ssh/known_hosts included, in place of the files ssh reads.
func (c *SSHConfig) knownHostsLine(alias, key string, defaults []string, written map[string]string, expand func(string) (string, error)) ([]string, error) {
	st, ok := c.firstWithWords(alias, key)
	if !ok {
		return defaults, nil
	}
	refuse := func(err error) error {
		return &SSHConfigError{File: st.file, Line: st.line, Host: alias, Key: key, Value: st.value, Err: fmt.Errorf("%s%w", st.readThrough(), err)}
	}
	args, _ := sshArgs(st.value) // a quote not closed is refusedLine's
	if len(args) == 1 && strings.EqualFold(args[0], "none") {
		return nil, nil
	}
	if len(args) > maxSSHHostsFiles {
		return nil, refuse(fmt.Errorf("more than %d files, which ssh refuses (\"too many %s entries\") and connects to no host, so readproof does not connect either; name %d files at most", maxSSHHostsFiles, strings.ToLower(key), maxSSHHostsFiles))
	}
	var out []string
	for _, a := range args {
		if a == "" {
			// a word the parser read otherwise than ssh (""# is the
			// file # to ssh, nothing to the parser): no file to read;
			// an empty word as ssh reads it is refusedLine's
			continue
		}
		p, err := expand(a)
		if err != nil {
			return nil, refuse(err)
		}
		if strings.Contains(a, "${") {
			written[p] = a
		}
		out = append(out, p)
	}
	return out, nil
}

// firstWithWords is the first line of the files, in the order ssh reads
// them, that gives key a word (sshArgs: a comment alone is none) in a
// Host block matching alias or a Match block that applies to it (its
// verdict matchYes), as ssh takes the first value it obtains wherever it
// stands; false when none does. A Match block that may apply (a
// criterion readproof does not evaluate) is passed over, and said
// (Warnings). Before session 30 a Match block's line was said and never
// applied, so that the files ssh reads for the host went unread.
func (c *SSHConfig) firstWithWords(alias, key string) (setting, bool) {
	st, ok := c.firstsWithWords(alias, key)[key]
	return st, ok
}

// firstsWithWords is firstWithWords for each of keys, in one walk of the
// blocks: the settings found, by key as given.
func (c *SSHConfig) firstsWithWords(alias string, keys ...string) map[string]setting {
	found := make(map[string]setting, len(keys))
	c.walkBlocks(alias, func(kv *ssh_config.KV, _ *sshConfigFile, on matchVerdict, at setting) bool {
		if on != matchYes {
			return true
		}
		for _, key := range keys {
			if _, done := found[key]; done || !strings.EqualFold(kv.Key, key) {
				continue
			}
			if args, _ := sshArgs(kv.Value); len(args) > 0 {
				at.key = key
				found[key] = at
			}
		}
		return len(found) < len(keys)
	})
	return found
}

// expandTildeOnly expands a leading ~ (home) or ~user (that user's home
// directory) of a GlobalKnownHostsFile path, as ssh does (ssh.c,
// tilde_expand_paths), which expands no %-token or ${NAME} there.
func expandTildeOnly(p, home string) (string, error) {
	if !strings.HasPrefix(p, "~") {
		return p, nil
	}
	name, rest, _ := strings.Cut(p[1:], "/")
	if name == "" {
		if home == "" {
			return "", errors.New("it names the home directory, which is not known (set HOME)")
		}
		return filepath.Join(home, rest), nil
	}
	u, err := user.Lookup(name)
	if err != nil || u.HomeDir == "" {
		return "", fmt.Errorf("~%s is the home directory of the user %q, whom this system does not know (%v): ssh exits then, connecting to no host; write the path from / or ~/", name, name, err)
	}
	return filepath.Join(u.HomeDir, rest), nil
}

// hostKeyAlias is the HostKeyAlias the configuration gives for alias, in
// lower case, as ssh reads it (ssh -G shows it so, and %k); "" for none.
//
// A Match block that applies to alias gives it as a Host block does, the
// first value obtained winning (firstWithWords), as for the known_hosts
// files; one that may apply is said (Warnings). Before session 30's
// review a Match block's HostKeyAlias was passed over and not said: the
// host key was looked up under the host name, where ssh looks it up
// under the alias, and a key listed for the name alone was taken.
func (c *SSHConfig) hostKeyAlias(alias string) string {
	st, ok := c.firstWithWords(alias, "HostKeyAlias")
	if !ok {
		return ""
	}
	return strings.ToLower(sshValue(st.value))
}

// hostKeyAddr is the name, with a port, the host key of a fetch of alias
// dialling addr is looked up under in known_hosts, as ssh looks it up
// (sshconnect.c, check_host_key): the HostKeyAlias when the
// configuration gives one, alone (port 22 reads as no port, so that a
// line of the alias without [ ]:port matches, as in ssh), else addr.
// Before, addr was looked up whatever the HostKeyAlias: a key known_hosts
// lists for the host name was taken where ssh, looking up the alias,
// refuses it.
func (c *SSHConfig) hostKeyAddr(alias, addr string) string {
	if ka := c.hostKeyAlias(alias); ka != "" {
		return net.JoinHostPort(ka, "22")
	}
	return addr
}

// hostKeyDB checks a server's host key against known_hosts files.
type hostKeyDB interface {
	HostKeyCallback() ssh.HostKeyCallback
	hostKeyAlgorithms(hostWithPort string) ([]string, error)
}

// hostKeys reads the known_hosts files ssh reads for a fetch of alias at
// host and port as remoteUser (knownHostsFor), each once, those it can
// open (readKnownHostsFiles). None is an error naming the files looked
// at, with a hint: ssh would find the host unknown.
//
// A RevokedHostKeys file for the host refuses the fetch, naming its line:
// ssh refuses the keys it lists (a KRL, or public keys), and readproof
// does not read it. Before session 30's review it was passed over unsaid,
// and readproof took a key ssh refuses as revoked.
func (c *SSHConfig) hostKeys(ctx context.Context, alias, host, port, remoteUser string) (hostKeyDB, error) {
	// one walk of the blocks for these (a configuration of tens of
	// thousands of Match blocks: one walk each doubled a fetch's check)
	set := c.firstsWithWords(alias, "RevokedHostKeys", "KnownHostsCommand", "HostKeyAlgorithms", "CASignatureAlgorithms", "CheckHostIP")
	if st, ok := set["RevokedHostKeys"]; ok {
		if args, _ := sshArgs(st.value); len(args) != 1 || !strings.EqualFold(args[0], "none") {
			return nil, hint.With(&SSHConfigError{File: st.file, Line: st.line, Host: alias, Key: "RevokedHostKeys", Value: st.value,
				Err: errors.New(st.readThrough() + "ssh refuses the host keys this file revokes, and readproof does not read it, so it does not connect")},
				"list each revoked key as a @revoked * KEY line in a known_hosts file ssh reads for the host, then remove the RevokedHostKeys line for it (or give the source's url a Host alias without it)")
		}
	}
	userFiles, global, written, err := c.knownHostsSplit(alias, host, port, remoteUser)
	if err != nil {
		return nil, err
	}
	files := append(slices.Clone(userFiles), global...)
	checkIP, err := checkHostIP(set, alias)
	if err != nil {
		return nil, err
	}
	cmd, err := c.knownHostsCommandFor(set, alias, host, port, remoteUser)
	if err != nil {
		return nil, err
	}
	algos, reorder, err := algorithmsFor(set, alias, "HostKeyAlgorithms", defaultHostKeyAlgorithms, sshHostKeyAlgorithms)
	if err != nil {
		return nil, err
	}
	if st, ok := set["HostKeyAlgorithms"]; ok {
		// one ssh takes (sk- keys) that readproof does not speak:
		// refused here, by its line, not when asked for
		if spoken := hostKeyAlgorithmsGo(); !slices.ContainsFunc(algos, func(a string) bool { return slices.Contains(spoken, a) }) {
			return nil, hint.With(&SSHConfigError{File: st.file, Line: st.line, Host: alias, Key: "HostKeyAlgorithms", Value: st.value,
				Err: fmt.Errorf("%sit names none of the host key algorithms readproof speaks (%s)", st.readThrough(), strings.Join(spoken, ","))},
				"add one the host's key signs with to the line (ssh -G HOST shows the list), or give the source's url a Host alias without it")
		}
	}
	caAlgos, _, err := algorithmsFor(set, alias, "CASignatureAlgorithms", caSignatureAlgorithms, sshCASignatureAlgorithms)
	if err != nil {
		return nil, err
	}
	known, read, err := readKnownHostsFiles(files)
	if err != nil {
		// the error names the file (knownhosts: FILE: ... line N)
		fix := "fix or remove the line the error names (ssh-keygen -R HOST removes a host's lines)"
		if errors.Is(err, errKnownHostsTooLarge) {
			fix = "remove the lines of hosts no longer used (ssh-keygen -R HOST -f FILE), or list this host's key in a file of its own, named in a UserKnownHostsFile line for the host"
		}
		return nil, hint.With(fmt.Errorf("cannot read known hosts (%s): %s", showWritten(strings.Join(files, ", "), written), showWritten(err.Error(), written)), fix)
	}
	known.cmd, known.ctx = cmd, ctx
	known.algos, known.reorder, known.caAlgos = algos, reorder, caAlgos
	if checkIP {
		// ssh reads the IP address's lines from the first of the
		// user's files and the system's (sshconnect.c, check_host_key)
		known.ip = &hostIPCheck{hostname: host, files: global}
		if len(userFiles) > 0 && os.Getenv("SSH_KNOWN_HOSTS") == "" {
			known.ip.files = append(known.ip.files, userFiles[0])
		} else {
			known.ip.files = append(known.ip.files, userFiles...)
		}
	}
	if len(read) == 0 && cmd == nil {
		looked := "none: UserKnownHostsFile and GlobalKnownHostsFile are both none for this host"
		if len(files) > 0 {
			looked = showWritten(strings.Join(files, ", "), written)
		}
		return nil, hint.With(fmt.Errorf("no known_hosts file to check the host key of %s against (the files ssh reads for this host: %s), so the host is not known", host, looked),
			"add the host's key to ~/.ssh/known_hosts (ssh-keygen -F HOST shows whether it is listed; ssh-keyscan prints it: check its fingerprint with the host's owner first), or name the file that lists it in a UserKnownHostsFile line for the host")
	}
	return known, nil
}

// showWritten is s with each path of written (one expanded from a
// ${NAME}) as the configuration writes it, the longest first.
func showWritten(s string, written map[string]string) string {
	paths := make([]string, 0, len(written))
	for p := range written {
		paths = append(paths, p)
	}
	slices.SortFunc(paths, func(a, b string) int { return len(b) - len(a) })
	for _, p := range paths {
		s = strings.ReplaceAll(s, p, written[p])
	}
	return s
}
