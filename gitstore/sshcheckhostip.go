package gitstore

// CheckHostIP, as OpenSSH 9.2 checks it (sshconnect.c, check_host_key):
// off by default since OpenSSH 8.5; set to yes, a host key taken for the
// host name is also looked up under the address dialled, and refused when
// a line for that address lists another key ("the host key for ...
// differs from the key for the IP address"), as ssh refuses it under
// strict checking. Before session 31 the setting was ignored.

import (
	"fmt"
	"net"
	"slices"
	"strings"

	"golang.org/x/crypto/ssh"

	"github.com/readproof/readproof/internal/hint"
)

// checkHostIP is whether the configuration sets CheckHostIP yes for
// alias (the first value obtained; set: firstsWithWords); an error names
// a line ssh refuses.
func checkHostIP(set map[string]setting, alias string) (bool, error) {
	st, ok := set["CheckHostIP"]
	if !ok {
		return false, nil // ssh 9.2's default
	}
	args, _ := sshArgs(st.value)
	if len(args) == 1 {
		switch strings.ToLower(args[0]) {
		case "yes", "true":
			return true, nil
		case "no", "false":
			return false, nil
		}
	}
	return false, &SSHConfigError{File: st.file, Line: st.line, Host: alias, Key: "CheckHostIP", Value: st.value,
		Err: fmt.Errorf("%snot yes or no, which ssh refuses (\"unsupported option\"): ssh connects to no host then, so readproof does not either; write yes or no", st.readThrough())}
}

// hostIPCheck is a CheckHostIP yes for the host.
type hostIPCheck struct {
	hostname string   // the host dialled, as the Hostname gives it
	files    []string // the files whose lines for the address count
}

// checkAddress checks key, taken for the host name, under the address
// remote it was dialled at, as ssh does with CheckHostIP yes: nothing for
// a loopback address or a host dialled by that same name (ssh turns the
// check off then), else the lines for the address of the first user file
// and the system's, then the KnownHostsCommand's (%I ADDRESS): one listing
// another key, and none this one, refuses the key. A key revoked there
// alone, or an address no line names, is not refused, as by ssh (which
// adds the address to known_hosts then; readproof writes nothing).
func (db *knownHostsDB) checkAddress(remote net.Addr, key ssh.PublicKey) error {
	tcp, ok := remote.(*net.TCPAddr)
	if db.ip == nil || !ok || tcp.IP.IsLoopback() {
		return nil
	}
	name, _, err := lookupName(tcp.String())
	if err != nil || name == db.ip.hostname {
		return nil
	}
	var lines []*hostKeyLine
	for _, l := range db.linesFor(name) {
		if slices.Contains(db.ip.files, l.file) {
			lines = append(lines, l)
		}
	}
	if db.cmd != nil {
		more, err := db.cmd.linesFrom(db.context(), commandKeyTokens{name: name, invocation: "ADDRESS", key: key})
		if err != nil {
			return err
		}
		lines = append(lines, more...)
	}
	var other *hostKeyLine
	for _, l := range lines {
		switch {
		case l.marker == "revoked" && sameKey(plainKey(l.key), key):
			return nil // HOST_REVOKED for the address: ssh goes on
		case l.marker != "":
		case sameKey(l.key, key):
			return nil
		default:
			other = l
		}
	}
	if other == nil {
		return nil
	}
	err = fmt.Errorf("host key %s %s of %s: it differs from the key %s line %d lists for the IP address %s (CheckHostIP yes), which ssh refuses under strict checking",
		key.Type(), ssh.FingerprintSHA256(key), db.ip.hostname, other.file, other.line, name)
	return hint.With(err, "another machine may answer at this address, or the host's key changed: check the key's fingerprint with the host's owner, then remove the address's old line (ssh-keygen -R "+name+") or set CheckHostIP no for the host")
}
