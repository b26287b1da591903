package gitstore

// The ssh configuration an ssh fetch follows, read once per fetch: the
// address checked before the fetch, the address dialled, the login and the
// keys offered all come from the same reading of the same files. OpenSSH's
// Match blocks are not applied (kevinburke/ssh_config refuses the whole
// file on one); the rest of the file is read, and a Match block that could
// change what readproof reads for the host is said.

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"os"
	"os/user"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	gitssh "github.com/go-git/go-git/v5/plumbing/transport/ssh"
	"github.com/kevinburke/ssh_config"

	"github.com/readproof/readproof/internal/hint"
)

// SSHConfig is ~/.ssh/config (~ the passwd entry's home: sshUserHome) and /etc/ssh/ssh_config as one ssh fetch
// reads them. Read it with ReadSSHConfig, check the address it gives
// (Address), and hand it to the fetch (MirrorOptions.SSHConfig) so that
// the fetch dials the address checked and reads the files no second time.
type SSHConfig struct {
	home    string
	homeErr error
	files   sshConfigs
	notes   []string // the files not read, for an SSHAuthError
	unread  []error  // ~/.ssh/config, or files it includes, not read: warnings
	refused error    // a configuration ssh refuses whole, or readproof cannot read as ssh does: connecting nowhere
	values  error    // the first Hostname, Port or User line ssh refuses in any block (refusedValue): connecting nowhere
	// hosts is go-git's reader when a caller has swapped its default
	// (which reads the passwd entry's home once per process) for another:
	// then it gives Hostname and Port (none when it is nil)
	hosts   sshConfigReader
	swapped bool
}

// sshConfigReader looks up an ssh configuration keyword for a host alias.
type sshConfigReader interface {
	Get(alias, key string) string
}

// sshUserHome is the home directory ssh reads ~/.ssh/config from and
// expands ~ and %d to: the passwd entry's of this user (ssh.c and misc.c,
// getpwuid), not $HOME, which sudo may keep from another user (ssh then
// reads root's configuration; $HOME's, another user's, would be refused
// as not this user's). With no passwd entry readproof can read,
// readSSHConfigs takes $HOME's, saying so.
func sshUserHome() (string, error) {
	if sshHomeForTest != nil {
		return sshHomeForTest()
	}
	return passwdHome()
}

// sshHomeForTest, when not nil, is sshUserHome in a test binary, whose
// tests write their ~/.ssh/config under a HOME of their own
// (SSHHomeFromEnvForTest); nil in the readproof binary.
var sshHomeForTest func() (string, error)

// passwdHome is the home directory of this process's user as the passwd
// entry gives it (os/user: /etc/passwd, or the system's lookup with
// cgo), $HOME's on Windows, where there is none.
func passwdHome() (string, error) {
	if runtime.GOOS == "windows" {
		return os.UserHomeDir()
	}
	uid := strconv.Itoa(os.Getuid())
	u, err := user.LookupId(uid)
	switch {
	case err != nil:
		return "", fmt.Errorf("no passwd entry for this user (uid %s): %w", uid, err)
	case u.HomeDir == "":
		return "", fmt.Errorf("the passwd entry of this user (uid %s) gives no home directory", uid)
	}
	return u.HomeDir, nil
}

// ReadSSHConfig reads ~/.ssh/config (~ the passwd entry's home
// directory, as ssh has it, not $HOME: sshUserHome), then
// /etc/ssh/ssh_config (a
// keyword's value is the first one given, as in OpenSSH). A file ssh goes
// on without (one it cannot open, a directory) is left out and noted:
// SSHConfig.Warnings says so of the user's, and an ssh server's refusal of
// every key names both. A file ssh refuses (a line it cannot parse, others
// can write it), or that readproof cannot follow as ssh reads it (over 1
// MiB, not a regular file), refuses every ssh fetch (Check).
func ReadSSHConfig() *SSHConfig { return readSSHConfigs(systemSSHConfig) }

// readSSHConfigs is ReadSSHConfig with system the system-wide file.
func readSSHConfigs(system string) *SSHConfig {
	c := &SSHConfig{}
	c.home, c.homeErr = sshUserHome()
	if c.homeErr != nil {
		// no passwd entry readproof can read: a static build reads
		// /etc/passwd alone, not LDAP or SSSD, where ssh finds the
		// user; $HOME rather than no ~/.ssh/config at all, whose
		// Hostname, ProxyJump and RefuseConnection would go unread
		if h, err := os.UserHomeDir(); err == nil && h != "" {
			c.unread = append(c.unread, hint.With(fmt.Errorf("%w, so readproof reads ~/.ssh/config and ~/.ssh/known_hosts under $HOME (%s); ssh reads them under the passwd entry's home, which it may find where a static readproof, reading /etc/passwd alone, does not (LDAP, SSSD), and refuses to run when there is none (\"No user exists for uid\")", c.homeErr, h),
				"give this uid an entry in /etc/passwd (in a container, run as a user the image lists), or check that $HOME is this user's home directory"))
			c.home, c.homeErr = h, nil
		}
	}
	var paths []string
	if c.home != "" {
		paths = append(paths, filepath.Join(c.home, ".ssh", "config"))
	}
	paths = append(paths, system)
	for i, p := range paths {
		home := c.home
		if i == len(paths)-1 {
			home = "" // the system file, where ssh refuses a ~ (refused)
		}
		f, err := readSSHConfigFile(p, home)
		if c.refused == nil {
			c.refused = refusedBy("", 0, p, err)
		}
		if err != nil {
			c.notes = append(c.notes, fmt.Sprintf("%s was not read, so neither were its IdentityFile lines (%v)", p, err))
			if i == 0 && c.home != "" {
				c.unread = append(c.unread, hint.With(&SSHConfigError{File: p, Err: fmt.Errorf("not read (%w), so its Host, Hostname, Port, User and IdentityFile lines are not used", err)},
					"fix the file (ssh -G HOST shows how ssh reads it), or move it aside"))
			}
			continue
		}
		if f != nil {
			if f.refused != nil && c.refused == nil {
				c.refused = f.refused
			}
			if f.values != nil && c.values == nil {
				c.values = f.values
			}
			f.system = home == ""
			c.files = append(c.files, *f)
			for _, e := range f.includeErrs {
				c.notes = append(c.notes, fmt.Sprintf("%v, so neither are its IdentityFile lines", e))
				if i == 0 && c.home != "" {
					c.unread = append(c.unread, hint.With(e,
						"readproof reads an included file when it is a regular one under "+strconv.Itoa(maxSSHConfigBytes>>20)+" MiB at most "+strconv.Itoa(maxSSHIncludeDepth)+" Include lines deep: fix the file or the Include line, or remove it (ssh -G HOST shows how ssh reads the configuration)"))
				}
			}
		}
	}
	if gitssh.DefaultSSHConfig != ssh_config.DefaultUserSettings {
		c.hosts, c.swapped = gitssh.DefaultSSHConfig, true
	}
	return c
}

// hostPort is where an ssh fetch of alias connects, as OpenSSH has it:
// the configuration's Hostname for alias, else alias, in lower case (ssh
// -G Git.Example.TEST gives hostname git.example.test: the name it dials
// and looks up in known_hosts); the URL's port when it gives one (port >
// 0: a port given wins, 22 included), else the configuration's Port for
// alias, Hostname or not, else 22.
func (c *SSHConfig) hostPort(alias string, port int) (string, int) {
	var conf sshConfigReader = c.files
	if c.swapped {
		conf = c.hosts
	}
	host := alias
	if conf == nil {
		return strings.ToLower(host), portOr(port, 0)
	}
	if h := conf.Get(alias, "Hostname"); h != "" {
		host = expandedHostname(h, alias)
	}
	var given int
	if p, ok := sshPortNumber(conf.Get(alias, "Port")); ok {
		given = p
	}
	return strings.ToLower(host), portOr(port, given)
}

// sshPortNumber is the port a Port value v gives, as ssh reads it (misc.c,
// a2port): a number from 1 to 65535, else the port of the TCP service of
// that name (Port ssh is 22); ok is false when it is neither, which ssh
// refuses ("Bad port"). The name is looked up as Go's resolver does
// (/etc/services, and Go's own table of a few services), spelt as in the
// file: getservbyname matches case, so Port SSH is refused, as by ssh.
func sshPortNumber(v string) (port int, ok bool) {
	if p, err := strconv.Atoi(v); err == nil {
		return p, p > 0 && p <= 65535
	}
	if v == "" || v != strings.ToLower(v) {
		return 0, false
	}
	p, err := net.LookupPort("tcp", v)
	if err != nil || p <= 0 || p > 65535 {
		return 0, false
	}
	return p, true
}

// portOr is the URL's port, else the configuration's, else 22.
func portOr(url, conf int) int {
	switch {
	case url > 0:
		return url
	case conf > 0:
		return conf
	}
	return sshPort
}

// Address is the host and port an ssh fetch of a URL naming host and port
// ("" for none: an scp-like URL never gives one) connects to: the
// configuration's Hostname for the host, else the host; the URL's port,
// else the configuration's Port for the host, else 22. A caller that
// checks the host before the fetch checks this one.
func (c *SSHConfig) Address(host, port string) (string, string) {
	p, err := strconv.Atoi(port)
	if err != nil || p <= 0 {
		p = 0
	}
	h, p := c.hostPort(host, p)
	return h, strconv.Itoa(p)
}

// Check is nil when readproof can follow the ssh configuration for a
// fetch of alias (the host as the URL names it) as ssh would; else an
// *SSHConfigError naming the file, the line and the setting, with a hint:
// a ProxyJump or ProxyCommand that ssh would go through (readproof always
// connects to the host directly; of the two, the first given decides, as
// in OpenSSH, and "none" is direct), or a Port that is not a port number
// (which ssh refuses, where readproof would dial 22); or, for any host, a
// ~ in an Include of the system file, for which ssh refuses the whole
// configuration. Without it, a user relying on a bastion would find the
// fetch gone around it.
func (c *SSHConfig) Check(alias string) error {
	if c.refused != nil {
		return c.refused
	}
	if err := c.checkKeywords(alias); err != nil {
		return err
	}
	if err := c.checkPort(alias); err != nil {
		return err
	}
	if err := c.checkHostname(alias); err != nil {
		return err
	}
	if err := c.checkUser(alias); err != nil {
		return err
	}
	if err := c.checkIdentityCount(alias); err != nil {
		return err
	}
	if c.values != nil {
		return c.values
	}
	if err := c.checkRefuseConnection(alias); err != nil {
		return err
	}
	for _, f := range c.files {
		st := f.first(alias, "ProxyJump", "ProxyCommand")
		if st.key == "" {
			continue
		}
		if strings.EqualFold(sshValue(st.value), "none") {
			return nil
		}
		shown := st.value
		if st.key == "ProxyCommand" {
			shown = "" // a command line may carry a token: not repeated
		}
		return &SSHConfigError{File: st.file, Line: st.line, Host: alias, Key: st.key, Value: shown,
			Err: errors.New(st.readThrough() + "readproof connects to the host directly, never through a proxy or a jump host, so it does not fetch this source; remove the setting for this host, or give the source's url a Host alias without it (with the host's Hostname), or mirror the repository where readproof can reach it directly")}
	}
	return nil
}

// checkRefuseConnection refuses a fetch of alias that OpenSSH 10.1's
// RefuseConnection (sshKeywordLater) refuses: ssh ends at once rather
// than connect; so does the fetch. The first value given for alias wins,
// in a Host block or a Match block that applies; one in a Match block
// that may apply (its criteria hold an exec, a user, canonical or final,
// which readproof does not evaluate: matchBlock.verdict) refuses it too,
// saying so, as ssh 10.1 may refuse it, and a no there does not stop a
// later yes from counting.
func (c *SSHConfig) checkRefuseConnection(alias string) error {
	var refused error
	c.walkBlocks(alias, func(kv *ssh_config.KV, f *sshConfigFile, on matchVerdict, st setting) bool {
		if on == matchNo || !strings.EqualFold(kv.Key, "RefuseConnection") {
			return true
		}
		v := strings.ToLower(sshValue(kv.Value))
		if v != "yes" && v != "true" {
			return on == matchMaybe // a no that surely applies wins
		}
		why := "ssh refuses to connect to this host (OpenSSH 10.1 and later), so readproof does not fetch this source; remove the setting for this host if the refusal is not meant for this source"
		if on == matchMaybe {
			why = "this line stands in a Match block whose criteria readproof does not evaluate (an exec, user, canonical or final), where ssh refuses to connect when they hold (OpenSSH 10.1 and later), so readproof does not fetch this source; narrow the Match block's host list so that it leaves this host out, or give the refusal in a Host block for the hosts it is meant for"
		}
		refused = &SSHConfigError{File: st.file, Line: st.line, Host: alias, Key: "RefuseConnection", Value: kv.Value,
			Err: errors.New(st.readThrough() + why)}
		return false
	})
	return refused
}

// checkPort refuses the first Port given for alias when it is not a port
// number.
func (c *SSHConfig) checkPort(alias string) error {
	st, ok := c.firstSet(alias, "Port")
	if !ok {
		return nil
	}
	args, _ := sshArgs(st.value)
	if len(args) > 1 {
		return &SSHConfigError{File: st.file, Line: st.line, Host: alias, Key: "Port", Value: st.value,
			Err: errors.New(st.readThrough() + "more than one word, which ssh refuses (\"extra arguments at end of line\"); write the port's number alone, or give it in the source's url (ssh://HOST:PORT/PATH)")}
	}
	if _, ok := sshPortNumber(sshValue(st.value)); ok {
		return nil
	}
	return &SSHConfigError{File: st.file, Line: st.line, Host: alias, Key: "Port", Value: st.value,
		Err: errors.New(st.readThrough() + "not a port number (1 to 65535) nor the name of a TCP service of /etc/services, which ssh refuses; write the port's number, or give it in the source's url (ssh://HOST:PORT/PATH)")}
}

// maxSSHIdentityFiles is OpenSSH's bound on the IdentityFile lines that
// apply to a host (ssh.h, SSH_MAX_IDENTITY_FILES).
const maxSSHIdentityFiles = 100

// checkIdentityCount refuses, as ssh refuses the configuration ("Too many
// identity files specified (max 100)"), the IdentityFile line for alias
// that comes when 100 are given already: ssh counts a path once (as
// written, quotes taken off, the user's files apart from the system's),
// but refuses any line past the hundredth, a path given before included.
// The lines counted are those of the blocks that apply, in the order ssh
// reads them: Host blocks matching alias and Match blocks whose criteria
// hold (matchBlock.verdict), interleaved as the files write them; a Match
// block whose criteria readproof does not evaluate (an exec, user,
// canonical or final) counts too, as ssh counts it where they hold, and
// the refusal says so.
func (c *SSHConfig) checkIdentityCount(alias string) error {
	type path struct {
		system bool
		v      string
	}
	seen := map[path]bool{}
	var maybe *setting // the first line counted of a Match block that may not apply
	var refused error
	c.walkBlocks(alias, func(kv *ssh_config.KV, f *sshConfigFile, on matchVerdict, st setting) bool {
		if on == matchNo || !strings.EqualFold(kv.Key, "IdentityFile") && !strings.EqualFold(kv.Key, "IdentityFile2") {
			return true
		}
		if len(seen) < maxSSHIdentityFiles {
			seen[path{f.system, sshValue(kv.Value)}] = true
			if on == matchMaybe && maybe == nil {
				maybe = &st
			}
			return true
		}
		why := fmt.Sprintf("more than %d IdentityFile lines apply to this host, which ssh refuses (\"Too many identity files specified (max %d)\") and connects to no host, so readproof does not connect either; give the host the keys it takes alone (a Host block of its own with IdentitiesOnly yes), or load the keys into ssh-agent", maxSSHIdentityFiles, maxSSHIdentityFiles)
		if on == matchMaybe || maybe != nil {
			at := st
			if maybe != nil {
				at = *maybe
			}
			why = fmt.Sprintf("more than %d IdentityFile lines apply to this host when the Match block holding the IdentityFile on %s line %d applies, and its criteria are ones readproof does not evaluate (an exec, user, canonical or final): where they hold, ssh refuses the configuration (\"Too many identity files specified (max %d)\") and connects to no host, so readproof does not connect either; give the host the keys it takes alone (a Host block of its own with IdentitiesOnly yes), narrow that Match block's criteria so that they leave this host out, or load the keys into ssh-agent", maxSSHIdentityFiles, at.file, at.line, maxSSHIdentityFiles)
		}
		refused = &SSHConfigError{File: st.file, Line: st.line, Host: alias, Key: "IdentityFile", Value: kv.Value,
			Err: errors.New(st.readThrough() + why)}
		return false
	})
	return refused
}

// firstSet is the first line of the files, in the order ssh reads them,
// that sets key for alias with a value; false when none does.
func (c *SSHConfig) firstSet(alias, key string) (setting, bool) {
	for _, f := range c.files {
		if st := f.first(alias, key); st.value != "" {
			return st, true
		}
	}
	return setting{}, false
}

// checkUser refuses the first User given for alias when it is more than
// one word, which ssh refuses ("extra arguments at end of line"): a
// login with a space is written in quotes.
func (c *SSHConfig) checkUser(alias string) error {
	st, ok := c.firstSet(alias, "User")
	if !ok {
		return nil
	}
	if args, _ := sshArgs(st.value); len(args) > 1 {
		return &SSHConfigError{File: st.file, Line: st.line, Host: alias, Key: "User", Value: st.value,
			Err: errors.New(st.readThrough() + "more than one word, which ssh refuses (\"extra arguments at end of line\"); write the user name alone, in double quotes if it holds a space, or in the source's url (ssh://USER@HOST/PATH)")}
	}
	return nil
}

// checkHostname refuses the first Hostname given for alias when ssh
// refuses it: a token ssh does not expand in it (it expands %h and %%
// alone), a % ending it, or more than one word.
func (c *SSHConfig) checkHostname(alias string) error {
	st, ok := c.firstSet(alias, "Hostname")
	if !ok {
		return nil
	}
	refuse := func(why string) error {
		return &SSHConfigError{File: st.file, Line: st.line, Host: alias, Key: "Hostname", Value: st.value,
			Err: errors.New(st.readThrough() + why)}
	}
	if args, _ := sshArgs(st.value); len(args) > 1 {
		return refuse("more than one word, which ssh refuses (\"extra arguments at end of line\"); write the host name alone")
	}
	if _, err := expandHostname(sshValue(st.value), alias); err != nil {
		return refuse(err.Error() + "; write the host name out, with %h for the host as the source's url names it and %% for a %")
	}
	return nil
}

// expandHostname expands the tokens ssh expands in a Hostname (ssh.c,
// percent_expand with "h" alone): %h, the host as the URL names it, and
// %%, a %. Any other token, or a % ending v, is an error naming it, as
// ssh refuses it ("unknown key", "invalid format"); ${NAME} and ~ are
// kept as written, as ssh keeps them.
func expandHostname(v, alias string) (string, error) {
	var b strings.Builder
	for i := 0; i < len(v); i++ {
		if v[i] != '%' {
			b.WriteByte(v[i])
			continue
		}
		i++
		switch {
		case i == len(v):
			return "", errors.New("a % ends it, which ssh refuses (\"invalid format\")")
		case v[i] == '%':
			b.WriteByte('%')
		case v[i] == 'h':
			b.WriteString(alias)
		default:
			r, _ := utf8.DecodeRuneInString(v[i:])
			return "", fmt.Errorf("%%%c is a token ssh does not expand in Hostname, which it refuses (\"unknown key %%%c\"): ssh expands %%h and %%%% there alone", r, r)
		}
	}
	return b.String(), nil
}

// expandedHostname is the Hostname v as ssh dials it for alias
// (expandHostname), v itself when ssh refuses it (Check refuses it
// before any connection).
func expandedHostname(v, alias string) string {
	if h, err := expandHostname(v, alias); err == nil {
		return h
	}
	return v
}

// setting is a line of an ssh configuration that sets a keyword.
type setting struct {
	key   string // the keyword as the caller gave it; "" for none
	value string
	file  string // the file the line is in: the one read, or one it includes
	line  int
	via   string // the file that includes file, "" when it is the one read
	viaAt int    // the line of via's Include
}

// readThrough says, for a setting of a file an Include line reads, which
// Include line that is; "" for a setting of the file read.
func (s setting) readThrough() string {
	if s.via == "" {
		return ""
	}
	return "read through the Include on " + s.via + " line " + strconv.Itoa(s.viaAt) + "; "
}

// first is the first line of the file, or of a file it includes, in a
// Host block matching alias, that sets one of keys.
func (c sshConfigFile) first(alias string, keys ...string) (st setting) {
	c.each(alias, func(kv *ssh_config.KV, in *sshConfigFile, top int) bool {
		for _, k := range keys {
			if strings.EqualFold(kv.Key, k) {
				st = setting{key: k, value: kv.Value, file: in.path, line: kv.Pos().Line}
				if top != 0 {
					st.via, st.viaAt = c.path, top
				}
				return false
			}
		}
		return true
	})
	return st
}

// remoteUser is the login for an ssh fetch of alias, in OpenSSH's order:
// the URL's user, else the User the configuration gives for the alias,
// else the local user. from says where it came from ("" for the URL).
func (c *SSHConfig) remoteUser(urlUser, alias string) (user, from string, err error) {
	if urlUser != "" {
		return urlUser, "", nil
	}
	if v, file := c.files.lookup(alias, "User"); v != "" {
		if strings.ContainsAny(v, "%$") || strings.HasPrefix(v, "~") {
			return "", "", &SSHConfigError{File: file, Host: alias, Key: "User", Value: v,
				Err: errors.New("readproof does not expand %-tokens, ${NAME} or ~ in User; write the user name out, or in the source's url (ssh://USER@HOST/PATH)")}
		}
		return v, "User in " + file, nil
	}
	if u := localUserName(); u != "" {
		return u, "the local user", nil
	}
	return "", "", errors.New("the ssh URL names no user, ~/.ssh/config gives none for the host and the local user name is not known; write the user in the URL (ssh://USER@HOST/PATH or USER@HOST:PATH)")
}

// Warnings are what a user should hear before an ssh fetch of alias (the
// host as the URL names it): ~/.ssh/config not read, and each Match
// block, which readproof does not apply, that could apply to the host and
// sets a keyword readproof reads (but for the known_hosts files of a
// block that applies, which are applied: appliedInMatch). Each names the
// file and line and carries a hint.
func (c *SSHConfig) Warnings(alias string) []error {
	var out []error
	out = append(out, c.unread...)
	for i := range c.files {
		out = append(out, c.files[i].unsupported()...)
	}
	hostname := alias
	if h := c.files.Get(alias, "Hostname"); h != "" {
		hostname = expandedHostname(h, alias)
	}
	var visit func(f *sshConfigFile)
	visit = func(f *sshConfigFile) {
		for _, m := range f.matches {
			v := m.verdict(alias, hostname)
			if v == matchNo {
				continue
			}
			keys := m.keywords()
			if v == matchYes {
				// applied where the block applies (firstWithWords)
				keys = slices.DeleteFunc(keys, appliedInMatch)
			}
			if len(keys) == 0 {
				continue
			}
			out = append(out, hint.With(&SSHConfigError{File: f.path, Line: m.line, Host: alias, Key: "Match", Value: m.shownCriteria(),
				Err: fmt.Errorf("readproof does not apply Match blocks, so this one's %s %s not used", strings.Join(keys, ", "), pluralVerb(len(keys)))},
				"put those lines in a Host block for the host (Host "+alias+"), which readproof reads as ssh does, or give the user in the source's url"))
		}
		for _, inc := range f.includes {
			// OpenSSH reads the files of an Include in a block that does
			// not apply to the host without applying any of their
			// lines, their Match blocks' included
			if f.blockVerdict(inc.block, alias, hostname) != matchNo {
				for _, g := range inc.files {
					visit(g)
				}
			}
		}
	}
	for i := range c.files {
		visit(&c.files[i])
	}
	return out
}

// appliedInMatch is whether readproof applies key, one of readKeywords,
// where it stands in a Match block that applies to the host, as ssh
// does: the known_hosts files, the name the host key is looked up under
// in them (hostKeyAlias), a file of revoked keys, which refuses the
// fetch (hostKeys), the command that lists host keys
// (knownHostsCommandFor), the algorithms asked for and taken from a CA
// (algorithmsFor), and whether the address's lines count (checkHostIP).
func appliedInMatch(key string) bool {
	switch key {
	case "UserKnownHostsFile", "GlobalKnownHostsFile", "HostKeyAlias", "RevokedHostKeys", "KnownHostsCommand",
		"HostKeyAlgorithms", "CASignatureAlgorithms", "CheckHostIP":
		return true
	}
	return false
}

// unsupported are the lines of the file, and of the files it includes,
// in any block, whose keyword OpenSSH 9.2 takes and does nothing with,
// saying so on each run ("Unsupported option": CompressionLevel,
// RSAAuthentication...), each a warning naming the file and line; the
// same for every host, so said once however many sources read it.
func (c *sshConfigFile) unsupported() []error {
	var out []error
	if c.conf != nil {
		for _, h := range c.conf.Hosts {
			for _, n := range h.Nodes {
				kv, ok := n.(*ssh_config.KV)
				if !ok || sshKeywords()[strings.ToLower(kv.Key)].kind != sshKeywordUnsupported {
					continue
				}
				out = append(out, hint.With(&SSHConfigError{File: c.path, Line: kv.Pos().Line,
					Err: fmt.Errorf("%s is a keyword ssh takes and does nothing with, saying so each time it runs (ssh: Unsupported option \"%s\"); readproof does nothing with it either", kv.Key, strings.ToLower(kv.Key))},
					"remove the line, or put a # before it"))
			}
		}
	}
	for _, inc := range c.includes {
		for _, f := range inc.files {
			out = append(out, f.unsupported()...)
		}
	}
	return out
}

// blockVerdict is whether the block of the file (a Host block, or the
// stand-in of a Match block) applies to a fetch of alias at hostname: a
// Host block whose patterns match alias does, a Match block as its
// verdict says. A block not known (nil) may.
func (c *sshConfigFile) blockVerdict(b *ssh_config.Host, alias, hostname string) matchVerdict {
	if b == nil {
		return matchMaybe
	}
	if i, ok := c.matchOf[b]; ok {
		return c.matches[i].verdict(alias, hostname)
	}
	if sshHostMatches(b, alias) {
		return matchYes
	}
	return matchNo
}

func pluralVerb(n int) string {
	if n == 1 {
		return "is"
	}
	return "are"
}

// sshConfigFile is one ssh configuration file read.
type sshConfigFile struct {
	path    string
	system  bool // /etc/ssh/ssh_config (or a file it includes), not the user's
	conf    *ssh_config.Config
	matches []matchBlock // its Match blocks, in order, none of them applied
	// matchOf is the index in matches of each Match block's stand-in,
	// so that the verdict of every block of a file costs one look-up:
	// before, each looked through all the Match blocks, and a check of
	// 32,000 of them took 7.8 s
	matchOf map[*ssh_config.Host]int
	// includes are the files each Include line reads, by the number its
	// includeMarker gives
	includes []sshInclude
	// includeErrs: the files Include lines name that were not read, at
	// any depth, each an *SSHConfigError naming the file and line of the
	// Include that names it
	includeErrs []error
	// refused is the first Include line, at any depth, for which every
	// ssh fetch is refused: one with a ~ in the system file, or one
	// naming a file ssh refuses or readproof cannot read as ssh does
	// (refusedBy)
	refused error
	// values is the first Hostname, Port or User line, at any depth, that
	// ssh refuses wherever it stands (refusedValue)
	values error
}

// sshInclude is an Include line and the files it reads, in order.
type sshInclude struct {
	line  int
	files []*sshConfigFile
	block *ssh_config.Host // the block the line stands in (a Match block's stand-in)
}

// each visits the lines that apply to alias (as the URL writes it) in the order
// OpenSSH reads them: those of the Host blocks matching alias, and where
// an Include line stands in such a block, the lines of the files it reads
// that apply (an Include in a block that does not match reads nothing).
// in is the file the line is in: c, or a file it includes; top is the
// line of the Include of c through which it was reached, 0 for a line of
// c. visit returns false to stop. alias is matched against Host patterns
// as OpenSSH matches it, capitals kept (OpenSSH 9.2: ssh -G
// Git.Example.TEST does not get Host git.example.test's lines, and ssh -G
// GIT.UP gets Host GIT.UP's ProxyJump). Only the name it then dials and
// looks up in known_hosts is in lower case (hostPort); Match host lists
// are matched in any case (matchBlock.verdict).
func (c *sshConfigFile) each(alias string, visit func(kv *ssh_config.KV, in *sshConfigFile, top int) bool) {
	c.walk(alias, 0, visit)
}

func (c *sshConfigFile) walk(alias string, top int, visit func(kv *ssh_config.KV, in *sshConfigFile, top int) bool) bool {
	if c.conf == nil {
		return true
	}
	for _, h := range c.conf.Hosts {
		if !sshHostMatches(h, alias) {
			continue
		}
		for _, n := range h.Nodes {
			kv, ok := n.(*ssh_config.KV)
			if !ok {
				continue
			}
			if kv.Key != includeMarker {
				if !visit(kv, c, top) {
					return false
				}
				continue
			}
			i, err := strconv.Atoi(kv.Value)
			if err != nil || i < 0 || i >= len(c.includes) || c.includes[i].line != kv.Pos().Line {
				continue // the keyword written in the file, not a marker
			}
			t := top
			if t == 0 {
				t = c.includes[i].line
			}
			for _, f := range c.includes[i].files {
				if !f.walk(alias, t, visit) {
					return false
				}
			}
		}
	}
	return true
}

// identities are the IdentityFile values the file gives for alias, in
// order, and its first IdentitiesOnly value ("" for none).
func (c *sshConfigFile) identities(alias string) (files []string, only string) {
	sts, only := c.identitySettings(alias)
	for _, st := range sts {
		files = append(files, st.value)
	}
	return files, only
}

// identitySettings are the IdentityFile lines the file, or a file it
// includes, gives for alias, in order, each with its file and line, and
// the first IdentitiesOnly value ("" for none).
func (c *sshConfigFile) identitySettings(alias string) (files []setting, only string) {
	c.each(alias, func(kv *ssh_config.KV, in *sshConfigFile, top int) bool {
		switch {
		case strings.EqualFold(kv.Key, "IdentityFile"), strings.EqualFold(kv.Key, "IdentityFile2"):
			// IdentityFile2 is an older name ssh still reads as
			// IdentityFile (sshKeywords)
			st := setting{key: "IdentityFile", value: kv.Value, file: in.path, line: kv.Pos().Line}
			if top != 0 {
				st.via, st.viaAt = c.path, top
			}
			files = append(files, st)
		case strings.EqualFold(kv.Key, "IdentitiesOnly") && only == "":
			only = kv.Value
		}
		return true
	})
	return files, only
}

// sshConfigs are ssh configuration files read in order: a keyword's value
// is the first one given, as in OpenSSH.
type sshConfigs []sshConfigFile

// Get is the first value the files give for key in a block matching alias,
// "" for none (or a file that cannot be looked up).
func (cs sshConfigs) Get(alias, key string) string {
	v, _ := cs.lookup(alias, key)
	return v
}

// lookup is Get and the file the value is from (one read, or one it
// includes).
func (cs sshConfigs) lookup(alias, key string) (string, string) {
	for _, c := range cs {
		if st := c.first(alias, key); st.value != "" {
			return sshValue(st.value), st.file
		}
	}
	return "", ""
}

// readSSHConfigFile reads the ssh configuration at path; nil for none.
// Its Include lines name files as OpenSSH reads them: a relative path
// from path's directory (~/.ssh, /etc/ssh), ~/ the home directory home
// ("" for the system file, where ssh refuses a ~: the file's refused).
// readproof reads the files they name itself, as it reads path: bounded,
// a file that is not a regular one refused (a FIFO does not block), at
// most maxSSHIncludeDepth levels deep; one not read is left out and said
// (includeErrs), the rest read.
func readSSHConfigFile(path, home string) (*sshConfigFile, error) {
	r := &includeReader{dir: filepath.Dir(path), home: home}
	f, err := r.read(path, 0)
	if f != nil {
		f.includeErrs, f.refused, f.values = r.errs, r.refused, r.values
	}
	return f, err
}

// sshRefusal is a line for which ssh refuses the whole configuration
// ("no argument after keyword"), so connecting to no host.
type sshRefusal struct {
	line int
	msg  string
	fix  string // the hint; "" for the one every such line gets
}

func (e *sshRefusal) Error() string { return e.msg }

// sshSkipped is a configuration file ssh goes on without: one it cannot
// open (ssh skips ~/.ssh/config or /etc/ssh/ssh_config then, but refuses
// the configuration for a file an Include line names), or a directory,
// which ssh reads as an empty file.
type sshSkipped struct {
	err  error
	open bool // the open failed
}

func (e *sshSkipped) Error() string { return e.err.Error() }
func (e *sshSkipped) Unwrap() error { return e.err }

// sshBadPerm is a file ssh refuses for its owner or mode ("Bad owner or
// permissions on FILE").
type sshBadPerm struct{ err error }

func (e *sshBadPerm) Error() string { return e.err.Error() }
func (e *sshBadPerm) Unwrap() error { return e.err }

// errSSHConfigTooLarge is a configuration file over maxSSHConfigBytes.
var errSSHConfigTooLarge = fmt.Errorf("larger than %d MiB", maxSSHConfigBytes>>20)

// refusedBy is the refusal of every ssh fetch when err, from reading the
// file at path (through the Include line of from at line; from "" for
// ~/.ssh/config or /etc/ssh/ssh_config), is one for which ssh refuses the
// configuration (a line it refuses, a file others can write, an included
// file it cannot open) or readproof cannot read the file as ssh would
// (over maxSSHConfigBytes, not a regular file, not parsed): ssh then
// connects to no host, or to one readproof cannot know, so readproof
// connects to none (the file left unread, a ProxyJump or Hostname in it
// would be gone around). nil for a nil err, and for a file ssh goes on
// without (sshSkipped: a directory, or a file it cannot open and need
// not).
func refusedBy(from string, line int, path string, err error) error {
	if err == nil {
		return nil
	}
	const none = " and connects to no host, so readproof does not connect either"
	const cannot = ", so readproof cannot follow the configuration as ssh reads it and does not connect to any host over ssh"
	named := func(what string) error {
		if from == "" {
			return &SSHConfigError{File: path, Err: errors.New(what)}
		}
		return &SSHConfigError{File: from, Line: line, Err: fmt.Errorf("the file %s this Include line names %s", path, what)}
	}
	var r *sshRefusal
	var skipped *sshSkipped
	var perm *sshBadPerm
	switch {
	case errors.As(err, &r) && r.fix != "":
		return &SSHConfigError{File: path, Line: r.line,
			Err: errors.New(strings.TrimPrefix(r.msg, "line "+strconv.Itoa(r.line)+": ") + none + "; " + r.fix)}
	case errors.As(err, &r):
		return &SSHConfigError{File: path, Line: r.line,
			Err: errors.New(strings.TrimPrefix(r.msg, "line "+strconv.Itoa(r.line)+": ") + " (ssh -G HOST says \"no argument after keyword\", \"invalid quotes\" or \"bad configuration option\")" + none + "; fix the line")}
	case errors.As(err, &skipped):
		if !skipped.open || from == "" {
			return nil
		}
		return named(fmt.Sprintf("cannot be opened (%v): ssh refuses the configuration then (\"Can't open user config file\")%s; make the file readable (chmod 600 %s), or remove it or the Include line", skipped.err, none, path))
	case errors.As(err, &perm):
		return named(fmt.Sprintf("is refused by ssh (\"Bad owner or permissions\": %v)%s; make it yours and writable by you alone (chmod go-w %s)", perm.err, none, path))
	case errors.Is(err, errSSHConfigTooLarge):
		return named(fmt.Sprintf("is larger than %d MiB, more than readproof reads of an ssh configuration file (ssh reads it whole)%s; shorten it, or move its Host blocks into files an Include line reads", maxSSHConfigBytes>>20, cannot))
	}
	if l, msg, ok := parsePosition(err.Error()); ok && from == "" {
		return &SSHConfigError{File: path, Line: l, Err: fmt.Errorf("cannot be parsed (%s)%s; fix the line (ssh -G HOST shows how ssh reads the file)", msg, cannot)}
	}
	return named(fmt.Sprintf("was not read (%v)%s; fix the file or replace it with a regular one (ssh -G HOST shows how ssh reads the configuration)", err, cannot))
}

// parsePosition splits the parser's "(LINE, COLUMN): MESSAGE" (after an
// "ssh_config: " the reader may put before it) into the line and message.
func parsePosition(s string) (int, string, bool) {
	s = strings.TrimPrefix(s, "ssh_config: ")
	pos, msg, ok := strings.Cut(s, "): ")
	if !ok || !strings.HasPrefix(pos, "(") {
		return 0, "", false
	}
	l, _, _ := strings.Cut(pos[1:], ",")
	n, err := strconv.Atoi(l)
	if err != nil || n < 1 {
		return 0, "", false
	}
	return n, strings.TrimSpace(msg), true
}

// maxSSHIncludeDepth is how deep Include lines nest, as in OpenSSH: a file
// read through more Include lines than that is refused.
const maxSSHIncludeDepth = 16

// maxSSHIncludedFiles bounds the files one configuration file's Include
// lines read, all levels together: a file that includes itself twice
// would otherwise be read 2^16 times.
const maxSSHIncludedFiles = 256

// includeReader reads a configuration file and the files its Include lines
// name.
type includeReader struct {
	dir, home string  // a relative path is from dir, ~/ is home
	files     int     // read so far
	full      bool    // files reached maxSSHIncludedFiles
	errs      []error // the included files not read, each an *SSHConfigError
	refused   error   // the first Include line that refuses every ssh fetch
	values    error   // the first Hostname, Port or User line ssh refuses (refusedValue)
}

// read reads the file at path, depth Include lines down from the first.
func (r *includeReader) read(path string, depth int) (*sshConfigFile, error) {
	f, err := openRead(path) // a FIFO does not block the open
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, &sshSkipped{err: err, open: true}
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	// as ssh, for ~/.ssh/config and any file an Include line reads (the
	// system file itself is not checked)
	if depth > 0 || r.home != "" {
		if err := sshConfigPermErr(fi); err != nil {
			return nil, &sshBadPerm{err}
		}
	}
	if fi.IsDir() {
		return nil, &sshSkipped{err: errors.New("a directory, which ssh reads as an empty file")}
	}
	if !fi.Mode().IsRegular() {
		return nil, errors.New("not a regular file")
	}
	data, err := io.ReadAll(io.LimitReader(f, maxSSHConfigBytes+1))
	if err != nil {
		return nil, err
	}
	if len(data) > maxSSHConfigBytes {
		return nil, errSSHConfigTooLarge
	}
	raw := data
	data, err = unquoteKeywords(data)
	if err != nil {
		return nil, err
	}
	data = unquoteHostPatterns(data)
	data, matches := neutraliseMatch(data)
	data, incs := markIncludes(data)
	// as ssh does, a bare Match or Include costs the file
	for _, m := range matches {
		if m.criteria == "" {
			return nil, &sshRefusal{line: m.line, msg: fmt.Sprintf("line %d: Match with no criteria, which ssh refuses", m.line)}
		}
	}
	for _, inc := range incs {
		if len(inc.paths) == 0 {
			return nil, &sshRefusal{line: inc.line, msg: fmt.Sprintf("line %d: Include with no file named, which ssh refuses", inc.line)}
		}
	}
	if err := refusedLine(raw); err != nil {
		return nil, err
	}
	if r.values == nil {
		r.values = refusedValue(path, raw)
	}
	c, err := decodeSSHConfig(data)
	if err != nil {
		return nil, err
	}
	keepWordHashes(c, data)
	// The blocks the Match lines became, in the order of the file.
	i := 0
	matchOf := make(map[*ssh_config.Host]int, len(matches))
	for _, h := range c.Hosts {
		if i < len(matches) && isMatchStandIn(h) {
			matches[i].host = h
			matchOf[h] = i
			i++
		}
	}
	if i != len(matches) {
		return nil, errors.New("ssh_config: a Match block was not found again after parsing")
	}
	out := &sshConfigFile{path: path, system: r.home == "", conf: c, matches: matches, matchOf: matchOf, includes: make([]sshInclude, len(incs))}
	for _, h := range c.Hosts {
		for _, n := range h.Nodes {
			if kv, ok := n.(*ssh_config.KV); ok && kv.Key == includeMarker {
				if i, err := strconv.Atoi(kv.Value); err == nil && i >= 0 && i < len(incs) && incs[i].line == kv.Pos().Line {
					out.includes[i].block = h
				}
			}
		}
	}
	for n, inc := range incs {
		out.includes[n].line = inc.line
		for _, w := range inc.paths {
			out.includes[n].files = append(out.includes[n].files, r.include(path, inc.line, w, depth)...)
		}
	}
	return out, nil
}

// include reads the files an Include line's path (or pattern) names, in
// the order of their names; those not read are noted.
func (r *includeReader) include(from string, line int, w string, depth int) []*sshConfigFile {
	fail := func(name string, err error) {
		e := &SSHConfigError{File: from, Line: line,
			Err: fmt.Errorf("the file %s this Include line names was not read (%w), so its Host, Hostname, Port, User and IdentityFile lines are not used; the rest is", name, err)}
		for _, said := range r.errs {
			if said.Error() == e.Error() {
				return // a file including itself: said once
			}
		}
		r.errs = append(r.errs, e)
	}
	badPattern := func(name string, err error) {
		r.errs = append(r.errs, &SSHConfigError{File: from, Line: line,
			Err: fmt.Errorf("this Include line's %s is not a path or pattern readproof reads (%w), so no file is read for it; the rest is", name, err)})
	}
	switch {
	case strings.HasPrefix(w, "~") && r.home == "":
		// ssh -G says "bad include path" and reads nothing more, for
		// any host, wherever the line stands
		if r.refused == nil {
			r.refused = &SSHConfigError{File: from, Line: line,
				Err: fmt.Errorf("this Include line's %s starts with ~, which ssh refuses in the system configuration and files it includes (\"bad include path\"): ssh then connects to no host, and readproof does not either; write the path out in full, or move the Include line to ~/.ssh/config, where ~ is the home directory", w)}
		}
		return nil
	case w == "~" || strings.HasPrefix(w, "~/"):
		w = filepath.Join(r.home, w[1:])
	case strings.HasPrefix(w, "~"):
		// ~user is that user's home directory, as ssh's glob reads it
		// (GLOB_TILDE); a user with none matches no file there either
		name, rest, _ := strings.Cut(w[1:], "/")
		u, err := user.Lookup(name)
		var unknown user.UnknownUserError
		switch {
		case errors.As(err, &unknown):
			return nil
		case err != nil || u.HomeDir == "":
			if r.refused == nil {
				r.refused = &SSHConfigError{File: from, Line: line,
					Err: fmt.Errorf("the home directory of the user %q this Include line's %s names is not known (%v), so readproof cannot read the files ssh would and does not connect to any host over ssh; write the path out in full", name, w, err)}
			}
			return nil
		}
		w = filepath.Join(u.HomeDir, rest)
	case !filepath.IsAbs(w):
		w = filepath.Join(r.dir, w)
	}
	names, err := filepath.Glob(w)
	if err != nil {
		badPattern(w, err)
		return nil
	}
	var out []*sshConfigFile
	for _, name := range names {
		if depth+1 > maxSSHIncludeDepth {
			err := fmt.Errorf("more than %d Include lines deep, which ssh refuses", maxSSHIncludeDepth)
			if r.refused == nil {
				r.refused = &SSHConfigError{File: from, Line: line,
					Err: fmt.Errorf("the file %s this Include line names is more than %d Include lines deep: ssh refuses the configuration then (\"Too many recursive configuration includes\") and connects to no host, so readproof does not connect either; remove the Include line that leads back to a file it is read from, or nest the files less deep", name, maxSSHIncludeDepth)}
			}
			fail(name, err)
			continue
		}
		if r.files >= maxSSHIncludedFiles {
			if !r.full { // said once: the files past it are not tried
				if r.refused == nil {
					r.refused = &SSHConfigError{File: from, Line: line,
						Err: fmt.Errorf("the file %s this Include line names is past the %d files readproof reads for one configuration, so readproof cannot follow the configuration as ssh reads it and does not connect to any host over ssh; include fewer files, or remove the Include line that leads back to a file it is read from", name, maxSSHIncludedFiles)}
				}
				fail(name, fmt.Errorf("more than %d files included", maxSSHIncludedFiles))
				r.full = true
			}
			continue
		}
		r.files++
		f, err := r.read(name, depth+1)
		if err != nil {
			if r.refused == nil {
				r.refused = refusedBy(from, line, name, err)
			}
			fail(name, err)
			continue
		}
		if f != nil {
			out = append(out, f)
		}
	}
	return out
}

// includeMarker replaces an Include line for the parser, which would read
// the files itself, unbounded: a keyword no ssh configuration writes,
// whose value is the Include's number in the file, from 0.
const includeMarker = "ReadproofInclude"

// includeLine is an Include line: its line, from 1, and its paths.
type includeLine struct {
	line  int
	paths []string
}

// markIncludes replaces each Include line of data by includeMarker, the
// line numbers kept, and returns the lines replaced, in order.
func markIncludes(data []byte) ([]byte, []includeLine) {
	out, found := keywordLines(data, "include", func(n int) string { return includeMarker + " " + strconv.Itoa(n) })
	var incs []includeLine
	for _, l := range found {
		incs = append(incs, includeLine{line: l.line, paths: splitCriteria(l.args)})
	}
	return out, incs
}

// unquoteKeywords rewrites each line of data whose keyword is written with
// double quotes ("Include" FILE, Ho"stname" HOST) with the keyword bare,
// as OpenSSH reads it (ssh -G reads "Match", "Include" and "Hostname"
// lines so): the parser and the Match and Include scanner would take the
// quoted word for an unknown keyword, so that a "Match" block's lines
// applied to the Host block above it and an "Include", "ProxyJump" or
// "Hostname" line went unread. As OpenSSH, a keyword ends at its closing
// quote, and an "=" just after it is the value's ("Port"=22 gives Port
// "=22", which ssh refuses; "Hostname"=h the host "=h"); a line whose
// quote is not closed is ignored, and so is one whose
// keyword is empty (an empty first word stands for nothing: the next
// word is the keyword, so that "=Port 2200" is Port 2200 and "==Port 2200"
// nothing, as in ssh); a quoted keyword holding a
// space is an error, as ssh refuses it. Other lines are kept as they
// are, and so are the line numbers.
func unquoteKeywords(data []byte) ([]byte, error) {
	lines := bytes.SplitAfter(data, []byte("\n"))
	changed := false
	for i, l := range lines {
		body := bytes.TrimRight(l, "\r\n")
		// a carriage return before the keyword is a space, as to ssh
		// ("\r=Include FILE" is an Include)
		rest := bytes.TrimLeft(body, " \t\r")
		if len(rest) == 0 || rest[0] == '#' {
			continue
		}
		first := rest
		if end := bytes.IndexAny(rest, " \t="); end >= 0 {
			first = rest[:end]
		}
		// a line starting with "=" (after spaces or not) has an empty
		// first word: ssh takes the next for the keyword (=Port 2200
		// is Port 2200), where the parser would take an empty one
		// (and a line with a form feed, which ssh takes for a word's
		// byte but at the line's end: " \f" is a blank line)
		if !bytes.Contains(first, []byte(`"`)) && rest[0] != '=' && bytes.IndexByte(body, '\f') < 0 {
			continue
		}
		// the words as ssh takes them from the line as written (leading
		// spaces and an "=" after them make the first word empty)
		kw, after, ok := sshWord(sshTrimLine(body))
		if ok && len(kw) == 0 {
			kw, after, ok = sshWord(after)
		}
		if bytes.ContainsAny(kw, " \t") {
			return nil, &sshRefusal{line: i + 1, msg: fmt.Sprintf("line %d: keyword %q holds a space, which ssh refuses", i+1, kw)}
		}
		var out []byte
		if ok && len(kw) > 0 && kw[0] != '#' {
			sep := " "
			if len(after) > 0 && after[0] == '=' {
				// ssh takes no "=" after a closing quote for the
				// one between keyword and value ("Port"=22 is Port
				// "=22", which ssh refuses): the parser is given
				// one of its own to take, and keeps the user's
				sep = " = "
			}
			out = append(append(append(out, kw...), sep...), after...)
		}
		lines[i] = append(out, l[len(body):]...)
		changed = true
	}
	if !changed {
		return data, nil
	}
	return bytes.Join(lines, nil), nil
}

// sshWord splits the first word off s as OpenSSH's configuration reader
// takes a keyword (readconf.c, strdelim): up to a space, a tab or an "=",
// or, where a double quote comes first, what it quotes, the quote taken
// off and the word ending at the closing one; rest is what follows, the
// spaces (and one "=" after an unquoted word) skipped. ok is false for a
// quote not closed.
func sshWord(s []byte) (word, rest []byte, ok bool) {
	i := bytes.IndexAny(s, " \t\r\n\"=")
	if i < 0 {
		return s, nil, true
	}
	if s[i] == '"' {
		j := bytes.IndexByte(s[i+1:], '"')
		if j < 0 {
			return nil, nil, false
		}
		word = append(append([]byte{}, s[:i]...), s[i+1:i+1+j]...)
		return word, bytes.TrimLeft(s[i+2+j:], " \t\r\n"), true
	}
	rest = bytes.TrimLeft(s[i:], " \t\r\n")
	if s[i] == '=' {
		rest = bytes.TrimLeft(s[i+1:], " \t\r\n")
	} else if len(rest) > 0 && rest[0] == '=' {
		rest = bytes.TrimLeft(rest[1:], " \t\r\n")
	}
	return s[:i], rest, true
}

// sshTrimLine is a line as ssh reads it before taking its words
// (readconf.c, process_config_line_depth): the spaces, tabs, carriage
// returns and form feeds ending it taken off, all but its first byte, so
// that a line of a form feed alone is a keyword "\f" with nothing after
// it, which ssh refuses, where " \f" is a blank line.
func sshTrimLine(l []byte) []byte {
	n := len(l)
	for n > 1 && bytes.IndexByte([]byte(" \t\r\n\f"), l[n-1]) >= 0 {
		n--
	}
	return l[:n]
}

// refusedLine is the first line of data that ssh refuses whatever its
// keyword (readconf.c, process_config_line_depth), so refusing the whole
// configuration, as an *sshRefusal: one with nothing after its keyword
// ("no argument after keyword"), or whose arguments hold a quote not
// closed ("invalid quotes"). A line whose keyword's quote is not closed
// is ignored, as by ssh. nil when there is none.
func refusedLine(data []byte) error {
	for i, l := range bytes.Split(data, []byte("\n")) {
		body := sshTrimLine(l)
		kw, rest, ok := sshWord(body)
		if ok && len(kw) == 0 {
			kw, rest, ok = sshWord(rest)
		}
		if !ok || len(kw) == 0 || kw[0] == '#' {
			continue
		}
		if len(rest) == 0 {
			if bytes.HasPrefix(kw, []byte(utf8BOM)) {
				return &sshRefusal{line: i + 1, msg: fmt.Sprintf("line %d: %s", i+1, bomRefusal), fix: bomFix}
			}
			return &sshRefusal{line: i + 1, msg: fmt.Sprintf("line %d: nothing after the keyword %q, which ssh refuses", i+1, shownKeyword(string(kw)))}
		}
		args, ok := sshArgs(string(rest))
		if !ok {
			return &sshRefusal{line: i + 1, msg: fmt.Sprintf("line %d: a quote is not closed, which ssh refuses", i+1)}
		}
		if err := refusedIdentityLine(i+1, string(kw), args); err != nil {
			return err
		}
	}
	return nil
}

// refusedValue is the first Hostname, Port or User line of data (the
// file at path) that ssh refuses wherever it stands, as an
// *SSHConfigError; nil when there is none. ssh reads every line, in the
// blocks that apply to the host it connects to and in the others, and
// refuses the whole configuration for one of these keywords with no value
// (a comment or "" alone: "Missing argument"), more than one word ("extra
// arguments at end of line"), or a Port that is no port ("Bad port"). In
// the block that applies to the host, Check names the host and the
// setting first (checkPort, checkHostname, checkUser).
func refusedValue(path string, data []byte) error {
	for i, l := range bytes.Split(data, []byte("\n")) {
		kw, rest, ok := sshWord(sshTrimLine(l))
		if ok && len(kw) == 0 {
			kw, rest, ok = sshWord(rest)
		}
		key := strings.ToLower(string(kw))
		if !ok || (key != "hostname" && key != "port" && key != "user") {
			continue
		}
		args, ok := sshArgs(string(rest))
		var why string
		switch {
		case !ok:
			continue // refusedLine's
		case len(args) == 0 || args[0] == "":
			why = "no value (a comment or \"\" alone), which ssh refuses (\"Missing argument\")"
		case len(args) > 1:
			why = "more than one word, which ssh refuses (\"extra arguments at end of line\")"
		case key == "port":
			if _, ok := sshPortNumber(args[0]); !ok {
				why = fmt.Sprintf("%q, not a port number (1 to 65535) nor the name of a TCP service of /etc/services, which ssh refuses (\"Bad port\")", args[0])
			}
		}
		if why != "" {
			return &SSHConfigError{File: path, Line: i + 1,
				Err: fmt.Errorf("%s with %s wherever the line stands: ssh connects to no host then, so readproof does not connect either; fix the line (ssh -G HOST shows how ssh reads it), or remove it", kw, why)}
		}
	}
	return nil
}

// sshArgs splits what follows a keyword into words as OpenSSH does
// (misc.c, argv_split): at spaces and tabs, a # at a word's start ending
// the line; double and single quotes keep spaces and are taken off; a
// backslash before a quote, a backslash or (outside quotes) a space
// stands for that character, before anything else for itself. ok is false
// for a quote not closed.
func sshArgs(s string) (args []string, ok bool) {
	for i := 0; i < len(s); i++ {
		if s[i] == ' ' || s[i] == '\t' {
			continue
		}
		if s[i] == '#' {
			break
		}
		var b []byte
		var quote byte
	word:
		for ; i < len(s); i++ {
			c := s[i]
			switch {
			case c == '\\' && i+1 < len(s) && (s[i+1] == '\'' || s[i+1] == '"' || s[i+1] == '\\' || (quote == 0 && s[i+1] == ' ')):
				i++
				b = append(b, s[i])
			case quote == 0 && (c == ' ' || c == '\t'):
				break word
			case quote == 0 && (c == '"' || c == '\''):
				quote = c
			case quote != 0 && c == quote:
				quote = 0
			default:
				b = append(b, c)
			}
		}
		if quote != 0 {
			return nil, false
		}
		args = append(args, string(b))
	}
	return args, true
}

// unquoteHostPatterns rewrites each Host line of data whose patterns are
// written with quotes or escapes (Host "git.example.test") with the
// patterns as ssh reads them (sshArgs), which the parser matches as
// written, quotes included, so that the block applies to the host, as in
// ssh, and its ProxyJump or User is not passed over. A line with a
// pattern holding a space, a quote or a "#" is left as written.
func unquoteHostPatterns(data []byte) []byte {
	lines := bytes.SplitAfter(data, []byte("\n"))
	changed := false
	for i, l := range lines {
		body := bytes.TrimRight(l, "\r\n")
		rest := bytes.TrimLeft(body, " \t")
		end := bytes.IndexAny(rest, " \t=")
		if end < 0 || !strings.EqualFold(string(rest[:end]), "host") || !bytes.ContainsAny(rest[end:], `"'\`) {
			continue
		}
		args := bytes.TrimLeft(rest[end:], " \t")
		args = bytes.TrimLeft(bytes.TrimPrefix(args, []byte("=")), " \t")
		words, ok := sshArgs(string(args))
		if !ok || len(words) == 0 {
			continue // refusedLine says so
		}
		plain := true
		for _, w := range words {
			if w == "" || strings.ContainsAny(w, " \t\"'\\#") {
				plain = false
			}
		}
		if plain {
			lines[i] = append([]byte("Host "+strings.Join(words, " ")), l[len(body):]...)
			changed = true
		}
	}
	if !changed {
		return data
	}
	return bytes.Join(lines, nil)
}

// sshValue is the value of a keyword that takes one, as ssh reads it
// (sshArgs): its first word, quotes and escapes taken off; v when it has
// none.
func sshValue(v string) string {
	if args, ok := sshArgs(v); ok && len(args) > 0 {
		return args[0]
	}
	return v
}

// keywordLine is a line of an ssh configuration that gives a keyword: its
// line, from 1, and what follows the keyword, without the "=" that may
// stand before it, a trailing comment, or the spaces around it.
type keywordLine struct {
	line int
	args string
}

// keywordLines replaces each line of data that gives keyword (in any
// case, followed by a space, a tab, a carriage return, an "=" or the
// line's end: a bare keyword is one too) by stand(n), n counting those
// lines from 0, the line's end and so the line numbers kept. It returns
// data so changed and the lines replaced, in order. A carriage return
// is a space here, before the keyword or after it, as to ssh (readconf.c,
// strdelim: " \t\r\n") and to the parser, which would otherwise read a
// "\rInclude FILE" line's files itself, unbounded (a FIFO waited on),
// and refuse a "\rMatch" line's file.
func keywordLines(data []byte, keyword string, stand func(n int) string) ([]byte, []keywordLine) {
	lines := bytes.SplitAfter(data, []byte("\n"))
	var found []keywordLine
	for i, l := range lines {
		body := bytes.TrimRight(l, "\r\n")
		rest := bytes.TrimLeft(body, " \t\r")
		end := bytes.IndexAny(rest, " \t\r=")
		if end < 0 {
			end = len(rest)
		}
		if !strings.EqualFold(string(rest[:end]), keyword) {
			continue
		}
		// cut at a # that starts a word, as ssh does: Include ~/x#y
		// names ~/x#y (before rr1's re-read of session 29, ~/x)
		args := sshLineValue(string(rest))
		lines[i] = append([]byte(stand(len(found))), l[len(body):]...)
		found = append(found, keywordLine{line: i + 1, args: args})
	}
	if len(found) == 0 {
		return data, nil
	}
	return bytes.Join(lines, nil), found
}

func decodeSSHConfig(data []byte) (c *ssh_config.Config, err error) {
	defer func() {
		// the parser turns its own panics into errors, except the
		// runtime's: those too are a file that cannot be read
		if r := recover(); r != nil {
			c, err = nil, fmt.Errorf("ssh_config: %v", r)
		}
	}()
	return ssh_config.DecodeBytes(data)
}

// matchStandIn replaces a Match line: a Host line whose patterns match no
// host (a negated * and a name no Host line would write), so that the
// parser, which refuses Match, reads the rest of the file, and the block's
// lines apply to nothing.
const matchStandIn = "Host !* !readproof-match-block"

func isMatchStandIn(h *ssh_config.Host) bool {
	// a Pattern prints without its !: a Host line "* readproof-match-block"
	// of the user's own matches that name
	return len(h.Patterns) == 2 && h.Patterns[0].String() == "*" && h.Patterns[1].String() == "readproof-match-block" && !h.Matches("readproof-match-block")
}

// matchBlock is a Match block of a configuration file.
type matchBlock struct {
	line     int    // of the Match line, from 1
	criteria string // what follows Match, as written
	host     *ssh_config.Host
}

// neutraliseMatch replaces each Match line of data by matchStandIn, the
// line numbers kept, and returns the blocks replaced.
func neutraliseMatch(data []byte) ([]byte, []matchBlock) {
	out, found := keywordLines(data, "match", func(int) string { return matchStandIn })
	var blocks []matchBlock
	for _, l := range found {
		blocks = append(blocks, matchBlock{line: l.line, criteria: l.args})
	}
	return out, blocks
}

// readKeywords are the keywords readproof reads of an ssh configuration
// (RefuseConnection: OpenSSH 10.1's, mostly written in Match blocks).
func readKeywords() []string {
	return []string{"Hostname", "Port", "User", "IdentityFile", "IdentitiesOnly", "ProxyJump", "ProxyCommand", "RefuseConnection", "UserKnownHostsFile", "GlobalKnownHostsFile", "HostKeyAlias", "RevokedHostKeys", "KnownHostsCommand", "HostKeyAlgorithms", "CASignatureAlgorithms", "CheckHostIP"}
}

// keywords are those of readKeywords the block sets, in that order; all
// of them when it includes other files.
func (m matchBlock) keywords() []string {
	set := map[string]bool{}
	for _, n := range m.host.Nodes {
		kv, ok := n.(*ssh_config.KV)
		if !ok {
			continue
		}
		if kv.Key == includeMarker {
			return readKeywords()
		}
		k := strings.ToLower(kv.Key)
		if info := sshKeywords()[k]; info.kind == sshKeywordAlias {
			k = strings.ToLower(info.of) // IdentityFile2 is IdentityFile
		}
		set[k] = true
	}
	var out []string
	for _, k := range readKeywords() {
		if set[strings.ToLower(k)] {
			out = append(out, k)
		}
	}
	return out
}

// matchVerdict is what readproof can tell of whether a Match block
// applies to a fetch.
type matchVerdict uint8

const (
	matchNo    matchVerdict = iota // its criteria rule the fetch out
	matchMaybe                     // a criterion readproof does not evaluate may hold
	matchYes                       // every criterion holds
)

// couldApply is false when the block surely does not apply to a fetch
// of alias at hostname: its verdict is matchNo. A block that may apply
// (a criterion readproof does not evaluate) could.
func (m matchBlock) couldApply(alias, hostname string) bool {
	return m.verdict(alias, hostname) != matchNo
}

// verdict is whether the block applies to a fetch of alias at hostname,
// its criteria read as OpenSSH 9.2 reads them (readconf.c,
// match_cfg_line): all of them must hold, a ! negating one. all holds;
// an originalhost list is matched against alias, a host list against
// the Hostname when the configuration gives one before the Match line,
// else alias (so, when they differ, a list matching one of them alone
// may hold), in any case; localuser against the local user's name.
// exec (a command readproof does not run), user (the login, which a
// later line may give), canonical and final (which depend on ssh's
// second reading of the file) and any other criterion may hold.
func (m matchBlock) verdict(alias, hostname string) matchVerdict {
	out := matchYes
	maybe := func() {
		if out == matchYes {
			out = matchMaybe
		}
	}
	words := splitCriteria(m.criteria)
	for i := 0; i < len(words); i++ {
		name := strings.ToLower(words[i])
		negate := strings.HasPrefix(name, "!")
		holds := func(ok bool) {
			if ok == negate {
				out = matchNo
			}
		}
		switch attr := strings.TrimPrefix(name, "!"); attr {
		case "all":
			holds(true)
		case "canonical", "final":
			maybe()
		case "host", "originalhost", "localuser":
			if i+1 == len(words) {
				maybe() // malformed: ssh refuses it; say so
				continue
			}
			i++
			var names []string
			switch attr {
			case "originalhost":
				names = []string{strings.ToLower(alias)}
			case "host":
				names = []string{strings.ToLower(alias), strings.ToLower(hostname)}
			default:
				names = []string{localUserName()}
			}
			list := words[i]
			if attr != "localuser" {
				list = strings.ToLower(list) // as OpenSSH's match_hostname
			}
			var hits int
			for _, n := range names {
				matched, ok := matchList(list, []string{n})
				if !ok {
					hits = -1
					break
				}
				if matched {
					hits++
				}
			}
			switch {
			case hits < 0 || (hits > 0 && hits < len(names)):
				maybe() // not a list, or the alias and the Hostname part
			default:
				holds(hits > 0)
			}
		default:
			i++ // exec, user, localnetwork, tagged...: one argument
			maybe()
		}
		if out == matchNo {
			return matchNo
		}
	}
	return out
}

// shownCriteria are the block's criteria as a message shows them: the
// command of an exec criterion, which may carry a token as a ProxyCommand
// may, not repeated.
func (m matchBlock) shownCriteria() string {
	words := splitCriteria(m.criteria)
	for i := 0; i < len(words); i++ {
		if strings.EqualFold(strings.TrimPrefix(words[i], "!"), "exec") && i+1 < len(words) {
			i++
			words[i] = "(command not shown)"
		} else if strings.ContainsAny(words[i], " \t") {
			words[i] = `"` + words[i] + `"`
		}
	}
	return strings.Join(words, " ")
}

// splitCriteria splits Match criteria into words at spaces and tabs, a
// double-quoted word kept whole.
func splitCriteria(s string) []string {
	var out []string
	var b strings.Builder
	quoted, in := false, false
	for _, r := range s {
		switch {
		case r == '"':
			quoted, in = !quoted, true
		case (r == ' ' || r == '\t') && !quoted:
			if in {
				out = append(out, b.String())
				b.Reset()
				in = false
			}
		default:
			b.WriteRune(r)
			in = true
		}
	}
	if in {
		out = append(out, b.String())
	}
	return out
}

// unquote removes the double quotes OpenSSH allows around a value.
func unquote(v string) string {
	if len(v) >= 2 && v[0] == '"' && v[len(v)-1] == '"' {
		return v[1 : len(v)-1]
	}
	return v
}
