package gitstore

import (
	"fmt"
	"strconv"
	"strings"
	"sync"

	"github.com/kevinburke/ssh_config"

	"github.com/readproof/readproof/internal/text"
)

// sshKeywordKind is how OpenSSH 9.2 takes a keyword of its client
// configuration.
type sshKeywordKind uint8

const (
	// sshKeyword is a keyword ssh reads.
	sshKeyword sshKeywordKind = iota
	// sshKeywordAlias is an older name ssh reads as another keyword
	// (ChallengeResponseAuthentication is KbdInteractiveAuthentication).
	sshKeywordAlias
	// sshKeywordDeprecated is a keyword ssh accepts and does nothing with
	// (with ssh -v: "Deprecated option").
	sshKeywordDeprecated
	// sshKeywordUnsupported is a keyword ssh accepts and does nothing with,
	// saying so ("Unsupported option").
	sshKeywordUnsupported
	// sshKeywordIgnored is a keyword ssh accepts and says nothing of.
	sshKeywordIgnored
	// sshKeywordLater is a keyword OpenSSH 9.2 refuses that a later
	// OpenSSH (9.3 to 10.x) or Apple's ssh reads: the user's own ssh may
	// take the file, so readproof does too, and reads nothing from it but
	// RefuseConnection (SSHConfig.Check).
	sshKeywordLater
)

// sshKeywords are the keywords of OpenSSH 9.2's client configuration
// (OpenSSH_9.2p1 as Debian 12 builds it, its GSSAPI key exchange and
// keep-alive keywords included), as ssh -G -F FILE HOST takes them: a
// keyword not listed makes ssh refuse the whole configuration ("Bad
// configuration option") unless an IgnoreUnknown line before it lists it.
// Found by reading man ssh_config and by giving ssh -G each candidate
// (the words of the ssh binary and of the manual page); keywords are
// matched in any case, and the key of the map is in lower case; the value
// is the spelling the manual gives, for a hint, with its kind, and for an
// alias, the keyword it stands for.
//
// Built on first use (a configuration that names an ssh source), not when
// the program starts.
var sshKeywords = sync.OnceValue(func() map[string]sshKeywordInfo {
	m := map[string]sshKeywordInfo{}
	for _, k := range strings.Fields(`
		AddKeysToAgent AddressFamily BatchMode BindAddress BindInterface
		CanonicalDomains CanonicalizeFallbackLocal CanonicalizeHostname
		CanonicalizeMaxDots CanonicalizePermittedCNAMEs CASignatureAlgorithms
		CertificateFile CheckHostIP Ciphers ClearAllForwardings Compression
		ConnectionAttempts ConnectTimeout ControlMaster ControlPath
		ControlPersist DynamicForward EnableEscapeCommandline EnableSSHKeysign
		EscapeChar ExitOnForwardFailure FingerprintHash ForkAfterAuthentication
		ForwardAgent ForwardX11 ForwardX11Timeout ForwardX11Trusted
		GatewayPorts GlobalKnownHostsFile GSSAPIAuthentication
		GSSAPIClientIdentity GSSAPIDelegateCredentials GSSAPIKexAlgorithms
		GSSAPIKeyExchange GSSAPIRenewalForcesRekey GSSAPIServerIdentity
		GSSAPITrustDns HashKnownHosts Host HostbasedAcceptedAlgorithms
		HostbasedAuthentication HostKeyAlgorithms HostKeyAlias Hostname
		IdentitiesOnly IdentityAgent IdentityFile IgnoreUnknown Include IPQoS
		KbdInteractiveAuthentication KbdInteractiveDevices KexAlgorithms
		KnownHostsCommand LocalCommand LocalForward LogLevel LogVerbose MACs
		Match NoHostAuthenticationForLocalhost NumberOfPasswordPrompts
		PasswordAuthentication PermitLocalCommand PermitRemoteOpen
		PKCS11Provider Port PreferredAuthentications ProxyCommand ProxyJump
		ProxyUseFdpass PubkeyAcceptedAlgorithms PubkeyAuthentication
		RekeyLimit RemoteCommand RemoteForward RequestTTY RequiredRSASize
		RevokedHostKeys SecurityKeyProvider SendEnv ServerAliveCountMax
		ServerAliveInterval SessionType SetEnv StdinNull StreamLocalBindMask
		StreamLocalBindUnlink StrictHostKeyChecking SyslogFacility TCPKeepAlive
		Tunnel TunnelDevice UpdateHostKeys User UserKnownHostsFile
		VerifyHostKeyDNS VisualHostKey XAuthLocation`) {
		m[strings.ToLower(k)] = sshKeywordInfo{name: k}
	}
	for alias, of := range map[string]string{
		"ChallengeResponseAuthentication": "KbdInteractiveAuthentication",
		"SKeyAuthentication":              "KbdInteractiveAuthentication",
		"TISAuthentication":               "KbdInteractiveAuthentication",
		"DSAAuthentication":               "PubkeyAuthentication",
		"HostbasedKeyTypes":               "HostbasedAcceptedAlgorithms",
		"PubkeyAcceptedKeyTypes":          "PubkeyAcceptedAlgorithms",
		"IdentityFile2":                   "IdentityFile",
		"SmartcardDevice":                 "PKCS11Provider",
		"ProtocolKeepAlives":              "ServerAliveInterval",
		"SetupTimeOut":                    "ServerAliveInterval",
	} {
		m[strings.ToLower(alias)] = sshKeywordInfo{name: alias, kind: sshKeywordAlias, of: of}
	}
	for kind, names := range map[sshKeywordKind]string{
		sshKeywordDeprecated: `Cipher FallBackToRsh GlobalKnownHostsFile2
			RhostsAuthentication UseBlacklistedKeys UsePrivilegedPort
			UserKnownHostsFile2 UseRoaming UseRsh`,
		sshKeywordUnsupported: `AFSTokenPassing CompressionLevel
			KerberosAuthentication KerberosTGTPassing RhostsRSAAuthentication
			RSAAuthentication`,
		sshKeywordIgnored: `Protocol`,
		// readconf.c of OpenSSH 9.4 (Tag), 9.5 (ObscureKeystrokeTiming),
		// 9.6 (ChannelTimeout), 10.0 (VersionAddendum) and 10.1
		// (RefuseConnection, WarnWeakCrypto); macOS's UseKeychain
		sshKeywordLater: `ChannelTimeout ObscureKeystrokeTiming RefuseConnection
			Tag UseKeychain VersionAddendum WarnWeakCrypto`,
	} {
		for _, k := range strings.Fields(names) {
			m[strings.ToLower(k)] = sshKeywordInfo{name: k, kind: kind}
		}
	}
	return m
})

// sshKeywordInfo is a keyword of sshKeywords.
type sshKeywordInfo struct {
	name string // as the manual spells it
	kind sshKeywordKind
	of   string // for an alias, the keyword it stands for
}

// nearestSSHKeyword is the keyword of sshKeywords closest to k (in any
// case) when it is at most two edits away, for a hint; "" for none.
func nearestSSHKeyword(k string) string {
	k = strings.ToLower(k)
	best, bestD := "", 3
	for low, info := range sshKeywords() {
		if info.kind != sshKeyword {
			continue // suggested by their current names
		}
		if d := min(text.EditDistance(k, low), 3); d < bestD || (d == bestD && d < 3 && info.name < best) {
			best, bestD = info.name, d
		}
	}
	return best
}

// checkKeywords refuses, as ssh refuses the whole configuration for a
// fetch of alias, the first line, in the order ssh reads the files, whose
// keyword OpenSSH 9.2 does not know (sshKeywords), unless the
// IgnoreUnknown in force there lists it: the first IgnoreUnknown given
// before it in a block that applies to alias (a Match block counts when
// readproof can tell that it applies: matchBlock.verdict; one whose
// criteria it does not evaluate, an exec, does not, and the refusal says
// so; given before the one in force, it must list the keyword too, as
// ssh takes its list where the block applies), its comma-separated patterns matched in any case, a negated one
// matching ruling the keyword out, as in ssh. A line in a block for
// another host counts too, as ssh reads every line: the error names the
// file, the line and the keyword, with the keyword the spelling may have
// meant and the IgnoreUnknown that lets ssh go past it.
func (c *SSHConfig) checkKeywords(alias string) error {
	ignore, ignoreSet := "", false
	var maybe *setting // the first IgnoreUnknown of a Match block that may apply
	// those of Match blocks that may apply given before the one in force:
	// where such a block applies, ssh takes its list instead
	var maybeFirst []setting
	var refused error
	lists := func(st setting, key string) bool {
		m, ok := matchList(strings.ToLower(sshValue(st.value)), []string{key})
		return ok && m
	}
	c.walkBlocks(alias, func(kv *ssh_config.KV, f *sshConfigFile, on matchVerdict, st setting) bool {
		key := strings.ToLower(kv.Key)
		if key == "ignoreunknown" {
			switch {
			case on == matchYes && !ignoreSet:
				ignore, ignoreSet = sshValue(kv.Value), true
			case on == matchMaybe:
				if maybe == nil {
					maybe = &st
				}
				if !ignoreSet {
					maybeFirst = append(maybeFirst, st)
				}
			}
			return true
		}
		if _, known := sshKeywords()[key]; known {
			return true
		}
		note := ""
		if ignoreSet {
			if m, ok := matchList(strings.ToLower(ignore), []string{key}); ok && m {
				i := 0
				for i < len(maybeFirst) && lists(maybeFirst[i], key) {
					i++
				}
				if i == len(maybeFirst) {
					return true
				}
				note = fmt.Sprintf("the IgnoreUnknown in force lists it, but the one on %s line %d, which does not, comes first in a Match block whose criteria readproof does not evaluate (an exec, user, canonical or final): where that block applies, ssh takes its list and refuses this line; add the keyword to that IgnoreUnknown line too, or remove this line", maybeFirst[i].file, maybeFirst[i].line)
			}
		}
		if note == "" && maybe != nil && lists(*maybe, key) {
			note = fmt.Sprintf("the IgnoreUnknown on %s line %d lists it, but stands in a Match block whose criteria readproof does not evaluate (an exec, user, canonical or final), so it may not apply and is not counted; move that IgnoreUnknown line to the top of the file, out of the Match block, or remove this line", maybe.file, maybe.line)
		}
		refused = unknownKeyword(f.path, kv.Pos().Line, kv.Key, st.via, st.viaAt, ignoreSet, note)
		return false
	})
	return refused
}

// walkBlocks visits every line of the files, and of the files they
// include, in the order ssh reads them, with whether the block it stands
// in applies to a fetch of alias (a Host block whose patterns match it,
// a Match block's verdict; for a file included, the including block's
// too), as a setting naming the line (key "" and value the line's),
// until visit returns false.
func (c *SSHConfig) walkBlocks(alias string, visit func(kv *ssh_config.KV, f *sshConfigFile, on matchVerdict, st setting) bool) {
	hostname := alias
	if h := c.files.Get(alias, "Hostname"); h != "" {
		hostname = expandedHostname(h, alias)
	}
	var walk func(f *sshConfigFile, active matchVerdict, via string, viaAt int) bool
	walk = func(f *sshConfigFile, active matchVerdict, via string, viaAt int) bool {
		if f.conf == nil {
			return true
		}
		for _, h := range f.conf.Hosts {
			on := min(active, f.blockVerdict(h, alias, hostname))
			for _, n := range h.Nodes {
				kv, ok := n.(*ssh_config.KV)
				if !ok {
					continue
				}
				if kv.Key == includeMarker {
					i, err := strconv.Atoi(kv.Value)
					if err == nil && i >= 0 && i < len(f.includes) && f.includes[i].line == kv.Pos().Line {
						v, at := via, viaAt
						if v == "" {
							v, at = f.path, f.includes[i].line
						}
						for _, g := range f.includes[i].files {
							if !walk(g, on, v, at) {
								return false
							}
						}
						continue
					}
				}
				if !visit(kv, f, on, setting{value: kv.Value, file: f.path, line: kv.Pos().Line, via: via, viaAt: viaAt}) {
					return false
				}
			}
		}
		return true
	}
	for i := range c.files {
		if !walk(&c.files[i], matchYes, "", 0) {
			return
		}
	}
}

// unknownKeyword is the refusal of a line of file whose keyword ssh does
// not know; note, when not "", is the whole of its way out (an
// IgnoreUnknown of a Match block readproof does not evaluate).
func unknownKeyword(file string, line int, key, via string, viaAt int, ignoreSet bool, note string) error {
	st := setting{via: via, viaAt: viaAt}
	if strings.HasPrefix(key, utf8BOM) {
		return &SSHConfigError{File: file, Line: line,
			Err: fmt.Errorf("%s%s and connects to no host, so readproof does not connect either; %s", st.readThrough(), bomRefusal, bomFix)}
	}
	shown := shownKeyword(key)
	fix := "list it in an IgnoreUnknown line before it (IgnoreUnknown " + text.Printable(shown) + "), at the top of the file, when it is meant for another program or a newer ssh, or remove the line"
	if ignoreSet {
		fix = "add it to the first IgnoreUnknown line given before it, when it is meant for another program or a newer ssh, or remove the line"
	}
	if near := nearestSSHKeyword(key); near != "" {
		fix = "did you mean " + near + "? Fix the spelling, or " + fix
	}
	if note != "" {
		fix = note
	}
	return &SSHConfigError{File: file, Line: line,
		Err: fmt.Errorf("%sthe keyword %q is not one OpenSSH 9.2 knows: ssh refuses the configuration then (\"Bad configuration option: %s\") and connects to no host, so readproof does not connect either; %s (ssh -G HOST shows how ssh reads the configuration)",
			st.readThrough(), shown, text.Printable(strings.ToLower(shown)), fix)}
}

// maxShownKeyword is how many bytes of a keyword a message quotes: a
// line of a configuration may be a megabyte long.
const maxShownKeyword = 64

// shownKeyword is a keyword of a configuration line as a message quotes
// it, cut to maxShownKeyword bytes (the cut marked).
func shownKeyword(key string) string { return text.Shorten(key, maxShownKeyword) }

// utf8BOM is the byte order mark some editors write at the start of a
// UTF-8 file; ssh reads it as bytes of the first keyword.
const utf8BOM = "\ufeff"

// bomRefusal and bomFix say why ssh refuses a file starting with a byte
// order mark, and what to do: ssh -G names only an unknown keyword
// ("Bad configuration option: \357\273\277host"), or "no argument
// after keyword" for a mark alone on its line.
const (
	bomRefusal = "the file starts with a UTF-8 byte order mark (the bytes EF BB BF, invisible in most editors), which ssh reads as part of the first keyword, so refusing the configuration (\"Bad configuration option\")"
	bomFix     = "save the file without the byte order mark (as UTF-8 without BOM, or ASCII; sed -i '1s/^\\xEF\\xBB\\xBF//' FILE takes it off)"
)

// refusedIdentityLine refuses, as an *sshRefusal, the words args of a line (at
// line, from 1) giving keyword kw, when ssh refuses the whole
// configuration for them wherever the line stands: a second word after
// IdentityFile, IdentitiesOnly, IgnoreUnknown or RefuseConnection ("extra
// arguments at end of line"), an IdentitiesOnly or RefuseConnection (as
// ssh 10.1 reads it) other than yes, no, true or false, in any case
// ("unsupported option"); any of them given a comment alone ("missing
// argument"); an empty word of a UserKnownHostsFile or
// GlobalKnownHostsFile, or its none beside another word
// (refusedKnownHostsLine). nil for a line of another keyword.
func refusedIdentityLine(line int, kw string, args []string) error {
	kw = strings.ToLower(kw)
	if kw == "userknownhostsfile" || kw == "globalknownhostsfile" {
		return refusedKnownHostsLine(line, kw, args)
	}
	var name string
	switch kw {
	case "identityfile", "identityfile2":
		name = "IdentityFile"
	case "identitiesonly":
		name = "IdentitiesOnly"
	case "ignoreunknown":
		name = "IgnoreUnknown"
	case "refuseconnection":
		// OpenSSH 10.1's (sshKeywordLater), read as ssh 10.1 reads it
		name = "RefuseConnection"
	default:
		return nil
	}
	if len(args) == 0 {
		// a comment alone (IdentitiesOnly #): ssh says "missing
		// argument" and refuses the configuration
		return &sshRefusal{line: line, msg: fmt.Sprintf("line %d: %s is given a comment alone, no value, which ssh refuses (\"missing argument\")", line, name), fix: "give it a value, or remove the line"}
	}
	if len(args) > 1 {
		how := map[string]string{
			"IdentityFile":     "write one path a line, in double quotes if it holds a space, and an IdentityFile line for each key",
			"IdentitiesOnly":   "write yes or no alone",
			"IgnoreUnknown":    "write the keywords as one comma-separated list (IgnoreUnknown UseKeychain,AddKeysToKeychain)",
			"RefuseConnection": "write yes or no alone",
		}[name]
		return &sshRefusal{line: line, msg: fmt.Sprintf("line %d: %s takes one word and is given %d, which ssh refuses (\"keyword %s extra arguments at end of line\")", line, name, len(args), kw), fix: how}
	}
	if name == "IdentitiesOnly" || name == "RefuseConnection" {
		switch strings.ToLower(args[0]) {
		case "yes", "no", "true", "false":
		default:
			return &sshRefusal{line: line, msg: fmt.Sprintf("line %d: %s %q is neither yes nor no, which ssh refuses (\"unsupported option\")", line, name, args[0]), fix: "write yes or no"}
		}
	}
	return nil
}

// refusedKnownHostsLine refuses, as an *sshRefusal, the words args of a
// UserKnownHostsFile or GlobalKnownHostsFile line (kw, in lower case)
// that ssh refuses wherever the line stands (readconf.c,
// parse_char_array): an empty word (""), or none beside another word.
func refusedKnownHostsLine(line int, kw string, args []string) error {
	for _, a := range args {
		switch {
		case a == "":
			return &sshRefusal{line: line, msg: fmt.Sprintf(`line %d: %s is given an empty word (""), which ssh refuses (ssh -G says: keyword %s empty argument)`, line, kw, kw), fix: "remove the empty word, or the line"}
		case strings.EqualFold(a, "none") && len(args) > 1:
			return &sshRefusal{line: line, msg: fmt.Sprintf(`line %d: %s gives none beside other files, which ssh refuses (ssh -G says: keyword %s "none" argument must appear alone)`, line, kw, kw), fix: "write none alone, for no file, or the files alone"}
		}
	}
	return nil
}
