package gitstore

// The keys an ssh fetch offers the server, found where OpenSSH (and so
// stock git) finds them: the ssh agent's keys when SSH_AUTH_SOCK names one
// that answers, then the IdentityFile keys ~/.ssh/config gives for the
// host, or, when it gives none, the default key files that exist. A CI job
// or a server with a deploy key file and no agent reads an ssh source as
// git would. Nothing here prompts: a key with a passphrase is left to the
// agent, and said so when no key is taken.

import (
	"bytes"
	"context"
	"crypto/sha1"
	"encoding/hex"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/user"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"unicode/utf8"

	sshagent "github.com/xanzy/ssh-agent"
	"golang.org/x/crypto/ssh"

	"github.com/readproof/readproof/internal/text"
)

// Bounds on what is read of a key file and of an ssh configuration file:
// a private key is a few KiB, and a configuration larger than this is not
// one a user wrote.
const (
	maxKeyFileBytes   = 64 << 10
	maxSSHConfigBytes = 1 << 20
)

// defaultIdentityFiles are the key files under ~/.ssh tried when
// ~/.ssh/config names none for the host, in OpenSSH 9.2's order
// (readconf.c, fill_default_options; ssh -G HOST lists them). Of these
// readproof offers the rsa, ecdsa and ed25519 keys: a security key's
// (_sk), an XMSS one or a DSA one is said and left out (unusableKey).
var defaultIdentityFiles = []string{"id_rsa", "id_ecdsa", "id_ecdsa_sk", "id_ed25519", "id_ed25519_sk", "id_xmss", "id_dsa"}

// systemSSHConfig is the system-wide ssh configuration, read after the
// user's as OpenSSH does.
const systemSSHConfig = "/etc/ssh/ssh_config"

// sshKeys is what an ssh fetch offers the server, and an account of what
// it looked at for the error when the server takes none of it.
type sshKeys struct {
	signers []ssh.Signer
	offered []string // each key source offered: the agent's keys, key file paths
	skipped []string // each key not offered, with why
	tried   []string // the key files looked at, in order, expanded (never shown: ${NAME} values)
	close   func()   // ends the agent connection, once the handshake is done
}

// SSHAuthError is an ssh server's refusal of every key an ssh fetch
// offered: it names the user and host, the keys offered (key file paths,
// the agent) and those not offered with why. It holds no key material.
type SSHAuthError struct {
	User, Host string
	UserFrom   string // where the user came from: "" for the URL, "User in FILE", "the local user"
	Offered    []string
	Skipped    []string
	Err        error
}

func (e *SSHAuthError) Error() string {
	var b strings.Builder
	if len(e.Offered) == 0 {
		fmt.Fprintf(&b, "the ssh server at %s wants a key for user %q%s and none was found to offer (", e.Host, e.User, e.from())
	} else {
		fmt.Fprintf(&b, "the ssh server at %s refused every key offered for user %q%s (offered: %s", e.Host, e.User, e.from(), strings.Join(e.Offered, ", "))
		if len(e.Skipped) > 0 {
			b.WriteString("; ")
		}
	}
	if len(e.Skipped) > 0 {
		b.WriteString("not offered: " + strings.Join(e.Skipped, "; "))
	}
	b.WriteString(")")
	// key paths and the Hostname come from ~/.ssh/config: a control
	// byte there is shown escaped, not sent to the terminal
	return text.Escape(b.String())
}

func (e *SSHAuthError) Unwrap() error { return e.Err }

func (e *SSHAuthError) from() string {
	if e.UserFrom == "" {
		return ""
	}
	return " (" + e.UserFrom + ")"
}

// SSHConfigError is a line of an ssh configuration that readproof will
// not guess at (an IdentityFile or User with a %-token it does not
// expand, ~user, ${NAME}) or follow (a ProxyJump or ProxyCommand, a
// ProxyCommand's Value left empty; a Port that is not a port number): the
// fetch stops before dialling. As a warning,
// it is a Match block not applied, or a file not read (no Host, no
// Value).
type SSHConfigError struct {
	File, Host, Value string
	Key               string // the keyword: User, Match; "" for IdentityFile
	Line              int    // of the line, from 1; 0 when not known
	Err               error
}

func (e *SSHConfigError) Error() string {
	where := e.File
	if e.Line > 0 {
		where += " line " + strconv.Itoa(e.Line)
	}
	if e.Host == "" && e.Value == "" {
		return text.Escape(fmt.Sprintf("%s: %v", where, e.Err))
	}
	key := e.Key
	if key == "" {
		key = "IdentityFile"
	}
	if e.Value == "" {
		return text.Escape(fmt.Sprintf("%s: %s for host %s: %v", where, key, e.Host, e.Err))
	}
	return text.Escape(fmt.Sprintf("%s: %s %q for host %s: %v", where, key, e.Value, e.Host, e.Err))
}

func (e *SSHConfigError) Unwrap() error { return e.Err }

// loadSSHKeys gathers the keys an ssh fetch of alias (the host as the URL
// names it) offers, for remoteUser at host (the Hostname ~/.ssh/config
// gives, or the alias), reading the ssh configuration afresh.
func loadSSHKeys(ctx context.Context, alias, host, remoteUser string) (*sshKeys, error) {
	return ReadSSHConfig().keys(ctx, alias, host, remoteUser)
}

// keys gathers the keys an ssh fetch of alias offers, for remoteUser at
// host, as the configuration gives them. An error is a configuration
// readproof will not guess at (a %-token it does not expand); a key that
// cannot be used is skipped and noted.
func (conf *SSHConfig) keys(ctx context.Context, alias, host, remoteUser string) (*sshKeys, error) {
	return conf.keysAt(ctx, alias, host, "", remoteUser)
}

// keysAt is keys for a fetch connecting to port ("" when not known: an
// IdentityFile with %p or %C is refused then).
func (conf *SSHConfig) keysAt(ctx context.Context, alias, host, port, remoteUser string) (*sshKeys, error) {
	k := &sshKeys{close: func() {}}
	home, herr := conf.home, conf.homeErr
	k.skipped = append(k.skipped, conf.notes...)
	var paths []string
	// shown are the paths expanded from an environment variable
	// (${NAME}), by the IdentityFile value as written: what the fetch
	// says of the key (offered, not offered and why, which an MCP client
	// or an evidence bundle may receive) shows no variable's value
	shown := map[string]string{}
	hide := func(p, s string) string {
		w, ok := shown[p]
		if !ok {
			return s
		}
		// a path quoted for a shell, in a hint's command, then as it is
		for _, q := range []string{p + ".pub", p} {
			if text.ShellArg(q) != q {
				s = strings.ReplaceAll(s, text.ShellArg(q), strings.Replace(q, p, w, 1))
			}
		}
		return strings.ReplaceAll(s, p, w)
	}
	only, onlySet, named := false, false, false
	for _, c := range conf.files {
		vals, o := c.identitySettings(alias)
		if o != "" && !onlySet {
			// the first value obtained wins, as in OpenSSH, which
			// takes yes and true in any case (Check refuses any
			// other word but no and false)
			o = strings.ToLower(sshValue(o))
			only, onlySet = o == "yes" || o == "true", true
		}
		for _, st := range vals {
			v := st.value
			// the path as ssh reads it: quotes and escapes taken off
			// (a second word is refused by Check, as by ssh)
			named = true
			w := sshValue(v)
			if strings.EqualFold(w, "none") {
				// ssh loads no key for it, and offers no default
				// key file either
				continue
			}
			p, err := conf.identityPath(v, alias, host, port, remoteUser, home)
			if err != nil {
				return nil, &SSHConfigError{File: st.file, Line: st.line, Host: alias, Key: "IdentityFile", Value: v, Err: fmt.Errorf("%s%w", st.readThrough(), err)}
			}
			if strings.Contains(w, "${") {
				shown[p] = w
			}
			paths = append(paths, p)
		}
	}
	if !named {
		if herr != nil {
			k.skipped = append(k.skipped, fmt.Sprintf("no home directory for the default key files (%v)", herr))
		}
		for _, name := range defaultIdentityFiles {
			if home != "" {
				paths = append(paths, filepath.Join(home, ".ssh", name))
			}
		}
	}

	k.tried = paths
	// The files first, so that IdentitiesOnly can keep the agent's keys
	// to theirs; offered after the agent's, as OpenSSH offers them.
	type fileKey struct {
		path   string
		signer ssh.Signer
	}
	var files []fileKey
	var filePubs [][]byte
	seen := map[string]bool{}
	defaultSeen := false
	for _, p := range paths {
		if seen[p] {
			continue
		}
		seen[p] = true
		signer, pub, why, locked := readKeyFile(p)
		if pub == nil && why != keyAbsent {
			// As OpenSSH: the public key beside the file, by which the
			// agent's copy of a key whose file shows none (a PEM key
			// with a passphrase) is known under IdentitiesOnly.
			pub2, err := readPublicKeyFile(p + ".pub")
			switch {
			case pub2 != nil:
				pub = pub2
			case locked && only:
				why = fmt.Sprintf("%s has a passphrase and is in the PEM format, which keeps its public key under the passphrase, and %s (IdentitiesOnly yes): write its public key beside it (ssh-keygen -y -f %s > %s) or convert it (ssh-keygen -p -f %s)",
					p, err, text.ShellArg(p), text.ShellArg(p+".pub"), text.ShellArg(p))
			}
		}
		if pub != nil {
			filePubs = append(filePubs, pub.Marshal())
		}
		if signer != nil {
			files = append(files, fileKey{p, signer})
			defaultSeen = defaultSeen || !named
			continue
		}
		if !named && why == keyAbsent {
			continue // a default key file that does not exist is not news
		}
		if why == keyAbsent {
			why = p + " does not exist"
		}
		if !named {
			defaultSeen = true
		}
		k.skipped = append(k.skipped, hide(p, why))
	}

	if !named && !defaultSeen && home != "" {
		k.skipped = append(k.skipped, fmt.Sprintf("no IdentityFile for %s in ~/.ssh/config and no key file %s, %s or %s", alias,
			filepath.Join(home, ".ssh", defaultIdentityFiles[0]), strings.Join(defaultIdentityFiles[1:len(defaultIdentityFiles)-1], ", "), defaultIdentityFiles[len(defaultIdentityFiles)-1]))
	}
	offeredPub := map[string]bool{}
	if sshagent.Available() {
		k.agentKeys(ctx, only, filePubs, offeredPub)
	} else if !only {
		none := "no ssh agent (SSH_AUTH_SOCK is not set)"
		if runtime.GOOS == "windows" {
			none = "no ssh agent (neither Pageant nor the OpenSSH agent runs)"
		}
		k.skipped = append(k.skipped, none)
	}
	for _, f := range files {
		pub := string(f.signer.PublicKey().Marshal())
		if offeredPub[pub] {
			continue // the agent offers it already
		}
		offeredPub[pub] = true
		k.signers = append(k.signers, f.signer)
		k.offered = append(k.offered, hide(f.path, f.path))
	}
	return k, nil
}

// agentKeys adds the keys of the ssh agent (SSH_AUTH_SOCK's; Pageant or
// the OpenSSH agent's pipe on Windows, as go-git's ssh transport found
// it); with IdentitiesOnly, only those whose public key is one of
// filePubs (the IdentityFile keys, whose passphrase the agent holds).
// A security key's is not offered, nor a DSA one, which OpenSSH 9.2
// skips as it skips a DSA key file (unusableKey); both are said.
func (k *sshKeys) agentKeys(ctx context.Context, only bool, filePubs [][]byte, offeredPub map[string]bool) {
	where := "the ssh agent"
	if sock := os.Getenv("SSH_AUTH_SOCK"); sock != "" {
		where += " at SSH_AUTH_SOCK=" + sock
	}
	ag, conn, err := sshagent.New()
	if err != nil {
		k.skipped = append(k.skipped, fmt.Sprintf("%s does not answer (%v)", where, err))
		return
	}
	if conn != nil {
		// An agent that accepts and never answers holds the fetch no
		// longer than its context.
		unbind := context.AfterFunc(ctx, func() { _ = conn.Close() })
		k.close = func() { unbind(); _ = conn.Close() }
	}
	signers, err := ag.Signers()
	if err != nil {
		k.skipped = append(k.skipped, fmt.Sprintf("%s did not list its keys (%v)", where, err))
		return
	}
	n, sk, dss := 0, 0, 0
	for _, s := range signers {
		switch typ := s.PublicKey().Type(); {
		case strings.HasPrefix(typ, "sk-"):
			// a security key's: the agent would wait for a touch
			// (unusableKey)
			sk++
			continue
		case isDSAKeyType(typ):
			// ssh 9.2 offers none, the agent's included (unusableKey)
			dss++
			continue
		}
		pub := s.PublicKey().Marshal()
		if only && !containsKey(filePubs, pub) {
			continue
		}
		if offeredPub[string(pub)] {
			continue
		}
		offeredPub[string(pub)] = true
		k.signers = append(k.signers, s)
		n++
	}
	if sk > 0 {
		k.skipped = append(k.skipped, fmt.Sprintf("%s: %s of a security key, which signs only with the security key plugged in and touched: readproof asks for no touch, so it does not offer them (give this source a key file of its own: ssh-keygen -t ed25519 -f FILE)", where, plural(sk, "key")))
	}
	if dss > 0 {
		k.skipped = append(k.skipped, fmt.Sprintf("%s: %s (ssh-dss), %s", where, plural(dss, "DSA key"), dsaRefusal))
	}
	switch {
	case n > 0:
		k.offered = append(k.offered, fmt.Sprintf("%s: %s", where, plural(n, "key")))
	case only && len(signers) > sk+dss:
		k.skipped = append(k.skipped, fmt.Sprintf("%s: %s, none of them an IdentityFile key (IdentitiesOnly yes)", where, plural(len(signers)-sk-dss, "key")))
	case sk == 0 && dss == 0:
		k.skipped = append(k.skipped, where+" holds no key")
	}
}

func containsKey(keys [][]byte, k []byte) bool {
	for _, x := range keys {
		if bytes.Equal(x, k) {
			return true
		}
	}
	return false
}

func plural(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return fmt.Sprintf("%d %ss", n, what)
}

// keyAbsent is readKeyFile's reason for a file that does not exist.
const keyAbsent = "absent"

// readKeyFile reads the private key at path. It returns the signer, or
// why the key is not offered ("" for nothing to say, keyAbsent for no
// such file, as the caller words it); the public key when the file shows
// it (an OpenSSH key with a passphrase does, outside the encryption; a
// PEM one does not); and whether the key has a passphrase.
func readKeyFile(path string) (signer ssh.Signer, pub ssh.PublicKey, why string, locked bool) {
	f, err := openRead(path) // a FIFO does not block the open
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil, keyAbsent, false
	}
	if err != nil {
		return nil, nil, fmt.Sprintf("%s cannot be read (%v)", path, err), false
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, nil, fmt.Sprintf("%s cannot be read (%v)", path, err), false
	}
	if !fi.Mode().IsRegular() {
		return nil, nil, fmt.Sprintf("%s is not a regular file", path), false
	}
	if perm := fi.Mode().Perm(); perm&0o077 != 0 && runtime.GOOS != "windows" {
		// OpenSSH refuses it too ("UNPROTECTED PRIVATE KEY FILE")
		return nil, nil, fmt.Sprintf("%s is readable by others (mode %04o), which ssh refuses for a private key: chmod 600 %s", path, perm, text.ShellArg(path)), false
	}
	data, err := io.ReadAll(io.LimitReader(f, maxKeyFileBytes+1))
	if err != nil {
		return nil, nil, fmt.Sprintf("%s cannot be read (%v)", path, err), false
	}
	if len(data) > maxKeyFileBytes {
		return nil, nil, fmt.Sprintf("%s is larger than %d KiB, too large for a private key", path, maxKeyFileBytes>>10), false
	}
	if why := unusableKey(path, privateKeyType(data)); why != "" {
		return nil, nil, why, false
	}
	signer, err = ssh.ParsePrivateKey(data)
	if err == nil {
		if why := unusableKey(path, signer.PublicKey().Type()); why != "" {
			return nil, nil, why, false
		}
	}
	var pass *ssh.PassphraseMissingError
	switch {
	case errors.As(err, &pass):
		// never prompted for: the agent holds the key unlocked
		return nil, pass.PublicKey, fmt.Sprintf("%s is encrypted: load it into ssh-agent (ssh-add %s)", path, text.ShellArg(path)), true
	case err != nil:
		// the parser's error names the format, never the content
		return nil, nil, fmt.Sprintf("%s is not a private key ssh can read (%v)", path, err), false
	}
	return signer, signer.PublicKey(), "", false
}

// privateKeyType is the key type an OpenSSH private key file shows
// outside its encryption (the type of its first public key:
// "sk-ssh-ed25519@openssh.com"), "DSA" for a PEM DSA key, "" for any
// other file.
func privateKeyType(data []byte) string {
	block, _ := pem.Decode(data)
	switch {
	case block == nil:
		return ""
	case block.Type == "DSA PRIVATE KEY":
		return "DSA"
	case block.Type != "OPENSSH PRIVATE KEY":
		return ""
	}
	const magic = "openssh-key-v1\x00"
	if !bytes.HasPrefix(block.Bytes, []byte(magic)) {
		return ""
	}
	var head struct {
		Cipher, KDF, KDFOptions string
		Keys                    uint32
		Pub                     []byte
		Rest                    []byte `ssh:"rest"`
	}
	var pub struct {
		Type string
		Rest []byte `ssh:"rest"`
	}
	if ssh.Unmarshal(block.Bytes[len(magic):], &head) != nil || head.Keys < 1 || ssh.Unmarshal(head.Pub, &pub) != nil {
		return ""
	}
	return pub.Type
}

// unusableKey is why readproof offers no key of type typ (an ssh key
// type name, or "DSA" for a PEM one) at path, as a skipped key's reason:
// a security key's, which signs only with the key plugged in and touched
// (readproof asks for no touch, rather than wait for one); an XMSS one,
// which it cannot read; a DSA one, which ssh 9.2 does not offer either
// unless PubkeyAcceptedAlgorithms enables ssh-dss. "" for any other.
func unusableKey(path, typ string) string {
	switch {
	case strings.HasPrefix(typ, "sk-"):
		return fmt.Sprintf("%s is a security key's (%s), which signs only with the security key plugged in and touched: readproof asks for no touch, so it does not offer it; give this source a key file of its own (ssh-keygen -t ed25519 -f FILE, with FILE.pub added on the server) and name it in an IdentityFile line for the host", path, typ)
	case strings.HasPrefix(typ, "ssh-xmss"):
		return fmt.Sprintf("%s is an XMSS key (%s), which readproof cannot read (OpenSSH builds XMSS only as an experiment); give this source an ed25519, ecdsa or rsa key", path, typ)
	case typ == "DSA" || isDSAKeyType(typ):
		return fmt.Sprintf("%s is a DSA key, %s", path, dsaRefusal)
	}
	return ""
}

// dsaRefusal is why a DSA key, a file's or the agent's, is not offered,
// in words that follow "is a DSA key, ".
const dsaRefusal = "which ssh 9.2 offers only when PubkeyAcceptedAlgorithms enables ssh-dss, and readproof never offers; give this source an ed25519, ecdsa or rsa key"

// isDSAKeyType is whether typ, an ssh key type name, is a DSA key's or
// a DSA key's certificate's: ssh 9.2's PubkeyAcceptedAlgorithms lists
// neither (ssh -G HOST | grep pubkeyacceptedalgorithms).
func isDSAKeyType(typ string) bool {
	return typ == "ssh-dss" || typ == "ssh-dss-cert-v01@openssh.com"
}

// readPublicKeyFile reads the public key at path (a .pub file: one line
// as in authorized_keys). The error says why there is none, in words
// that follow "and".
func readPublicKeyFile(path string) (ssh.PublicKey, error) {
	f, err := openRead(path) // a FIFO does not block the open
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("there is no %s beside it", path)
	}
	if err != nil {
		return nil, fmt.Errorf("%s cannot be read (%v)", path, err)
	}
	defer f.Close()
	if fi, err := f.Stat(); err != nil {
		return nil, fmt.Errorf("%s cannot be read (%v)", path, err)
	} else if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("%s is not a regular file", path)
	}
	data, err := io.ReadAll(io.LimitReader(f, maxKeyFileBytes+1))
	if err != nil {
		return nil, fmt.Errorf("%s cannot be read (%v)", path, err)
	}
	if len(data) > maxKeyFileBytes {
		return nil, fmt.Errorf("%s is larger than %d KiB, too large for a public key", path, maxKeyFileBytes>>10)
	}
	pub, _, _, _, err := ssh.ParseAuthorizedKey(data)
	if err != nil {
		return nil, fmt.Errorf("%s is not a public key ssh can read (%v)", path, err)
	}
	return pub, nil
}

// localUserName is the local user's login name, as OpenSSH's %u.
func localUserName() string {
	if u, err := user.Current(); err == nil && u.Username != "" {
		return u.Username
	}
	return os.Getenv("USER")
}

// identityPath is the key file the IdentityFile value v (as the file
// writes it) names for a fetch of alias at host and port as remoteUser,
// home the home directory: v unquoted and its tokens expanded as ssh 9.2
// reads it.
func (conf *SSHConfig) identityPath(v, alias, host, port, remoteUser, home string) (string, error) {
	return expandIdentityPathFor(sshValue(v), identityTokens{home: home, localUser: localUserName(), host: host, remoteUser: remoteUser,
		alias: alias, keyAlias: conf.hostKeyAlias(alias), port: port})
}

// identityTokens are the values of the %-tokens ssh 9.2 expands in an
// IdentityFile (man ssh_config, TOKENS): "" for one not known.
type identityTokens struct {
	home       string // %d, and ~
	localUser  string // %u
	host       string // %h: the Hostname the configuration gives, else the host as the URL names it
	remoteUser string // %r
	alias      string // %n: the host as the URL names it
	keyAlias   string // %k: the HostKeyAlias the configuration gives ("" for none: %k is then alias)
	port       string // %p
}

// expandIdentityPath expands an IdentityFile value as OpenSSH does (see
// expandIdentityPathFor), for a fetch whose port and host alias are not
// known: %p, %C, %n and %k are refused.
func expandIdentityPath(p, home, localUser, host, remoteUser string) (string, error) {
	return expandIdentityPathFor(p, identityTokens{home: home, localUser: localUser, host: host, remoteUser: remoteUser})
}

// expandIdentityPathFor expands an IdentityFile value as OpenSSH 9.2 does
// (ssh -v shows the paths it loads): a leading ~ (the home directory),
// %d (the home directory), %u (the local user), %h (the remote host), %r
// (the remote user), %n (the host as the URL names it), %k (the
// HostKeyAlias, else %n), %p (the port), %i (the local user id), %l and
// %L (the local host name, and its part before the first dot), %C (the
// SHA-1 of %l%h%p%r, in hex) and %% (a %); ~user (that user's home
// directory) and ${NAME} (the environment variable's value). Any other
// token, a % ending the value, a user the system does not know and a
// variable not set (all of which ssh refuses too) are refused: a path
// guessed at would offer, or miss, the wrong key. So
// is a value the URL gives (host, alias, remote user), or the
// configuration (HostKeyAlias), that is not one file name (a / or \, .
// or ..): ~/.ssh/keys/%r must not lead out of ~/.ssh/keys.
func expandIdentityPathFor(p string, x identityTokens) (string, error) {
	home := x.home
	needHome := func() error {
		if home == "" {
			return errors.New("it names the home directory, which is not known (set HOME)")
		}
		return nil
	}
	if strings.HasPrefix(p, "~") {
		rest := p[1:]
		if rest != "" && rest[0] != '/' {
			// ~user: that user's home directory, as ssh reads it
			// (misc.c, tilde_expand: the passwd entry's)
			name, after, _ := strings.Cut(rest, "/")
			u, err := user.Lookup(name)
			if err != nil {
				return "", fmt.Errorf("~%s is the home directory of the user %q, whom this system does not know (%v): ssh exits then (\"No such user\"), connecting to no host; write the path from / or ~/", name, name, err)
			}
			out, err := expandTokens(after, x)
			if err != nil {
				return "", err
			}
			return strings.TrimSuffix(u.HomeDir, "/") + "/" + strings.TrimLeft(out, "/"), nil
		}
		if err := needHome(); err != nil {
			return "", err
		}
		// ~ is %d: a % in the home directory is not read as a token
		p = "%d" + rest
	}
	if strings.Contains(p, "%d") {
		if err := needHome(); err != nil {
			return "", err
		}
	}
	return expandTokens(p, x)
}

// expandTokens replaces the %-tokens of p.
func expandTokens(p string, x identityTokens) (string, error) {
	notKnown := func(tok byte, what string) error {
		return fmt.Errorf("%%%c is %s, which readproof does not know here; write the path out", tok, what)
	}
	localHost := func() (string, error) {
		h, err := os.Hostname()
		if err != nil || h == "" {
			return "", fmt.Errorf("the local host name is not known (%v); write the path out", err)
		}
		return h, nil
	}
	var b strings.Builder
	for i := 0; i < len(p); i++ {
		if strings.HasPrefix(p[i:], "${") {
			// ${NAME}: the environment variable's value, as ssh
			// expands it (misc.c, percent_dollar_expand), not read
			// again for tokens
			name, _, ok := strings.Cut(p[i+2:], "}")
			switch {
			case !ok:
				return "", errors.New("a ${ has no closing }, which ssh refuses (\"missing closing '}'\"); write ${NAME} whole, or the path out")
			case name == "":
				return "", errors.New("it holds ${}, which ssh refuses (\"zero-length environment variable\"); write ${NAME} with a name, or the path out")
			}
			v, set := os.LookupEnv(name)
			if !set {
				return "", fmt.Errorf("it names the environment variable ${%s}, which is not set: ssh exits then (\"env var ${%s} has no value\"), connecting to no host; set %s (ssh expands ${NAME} from the environment), or write the path out", name, name, name)
			}
			b.WriteString(v)
			i += 2 + len(name) // at the }
			continue
		}
		if p[i] != '%' {
			b.WriteByte(p[i])
			continue
		}
		if i+1 == len(p) {
			return "", errors.New("it ends in a lone %, which ssh refuses (\"invalid format\"); write %% for a %")
		}
		i++
		switch tok := p[i]; tok {
		case 'd':
			b.WriteString(x.home)
		case 'u':
			b.WriteString(x.localUser)
		case 'h', 'r', 'n', 'k':
			what, v := "host", x.host
			switch tok {
			case 'r':
				what, v = "remote user", x.remoteUser
			case 'n', 'k':
				if x.alias == "" {
					return "", notKnown(tok, "the host as the url names it")
				}
				v = x.alias
				if tok == 'k' && x.keyAlias != "" {
					what, v = "host key alias", x.keyAlias
				}
			}
			if err := oneName(what, v); err != nil {
				return "", err
			}
			b.WriteString(v)
		case 'p':
			if x.port == "" {
				return "", notKnown(tok, "the port")
			}
			b.WriteString(x.port)
		case 'i':
			uid := os.Getuid()
			if uid < 0 {
				return "", notKnown(tok, "the local user id")
			}
			b.WriteString(strconv.Itoa(uid))
		case 'l', 'L':
			h, err := localHost()
			if err != nil {
				return "", err
			}
			if tok == 'L' {
				h, _, _ = strings.Cut(h, ".")
			}
			b.WriteString(h)
		case 'C':
			h, err := localHost()
			if err != nil {
				return "", err
			}
			if x.port == "" {
				return "", notKnown(tok, "a hash of the port among others")
			}
			sum := sha1.Sum([]byte(h + x.host + x.port + x.remoteUser))
			b.WriteString(hex.EncodeToString(sum[:]))
		case '%':
			b.WriteByte('%')
		default:
			r, _ := utf8.DecodeRuneInString(p[i:])
			return "", fmt.Errorf("%%%c is not a token ssh expands in an IdentityFile or a UserKnownHostsFile (it refuses it: \"unknown key %%%c\"); ssh 9.2 expands %%%% %%C %%d %%h %%i %%k %%L %%l %%n %%p %%r %%u there; write the path out, with %%%% for a %%", r, r)
		}
	}
	return b.String(), nil
}

// oneName refuses, for %h, %r, %n or %k, a value (what, from the URL or
// the configuration) that would
// not be one file name in the path: a separator, . or .., or nothing.
func oneName(what, v string) error {
	if v == "" || v == "." || v == ".." || strings.ContainsAny(v, "/\\") {
		return fmt.Errorf("the %s %q is not a file name, so it is not put in a key's path; write the path out, or fix the source's url", what, v)
	}
	return nil
}
