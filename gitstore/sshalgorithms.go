package gitstore

// The HostKeyAlgorithms and CASignatureAlgorithms of the ssh
// configuration, assembled as OpenSSH 9.2 assembles them (kex.c,
// kex_assemble_names; readconf.c, fill_default_options): a list replaces
// the default, +list appends to it, -list takes from it, ^list puts
// before it, and each name may be a pattern (* and ?) matched against
// every algorithm ssh knows. Before session 31 both were ignored: a host
// key type the user removed was asked for, and an ssh-rsa server the
// user allowed was refused.

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"golang.org/x/crypto/ssh"
)

// sshHostKeyAlgorithms are the host key algorithms OpenSSH 9.2 knows, in
// its order (ssh -Q HostKeyAlgorithms): what a pattern is matched
// against.
var sshHostKeyAlgorithms = strings.Split("ssh-ed25519,ssh-ed25519-cert-v01@openssh.com,sk-ssh-ed25519@openssh.com,"+
	"sk-ssh-ed25519-cert-v01@openssh.com,ecdsa-sha2-nistp256,ecdsa-sha2-nistp256-cert-v01@openssh.com,ecdsa-sha2-nistp384,"+
	"ecdsa-sha2-nistp384-cert-v01@openssh.com,ecdsa-sha2-nistp521,ecdsa-sha2-nistp521-cert-v01@openssh.com,"+
	"sk-ecdsa-sha2-nistp256@openssh.com,sk-ecdsa-sha2-nistp256-cert-v01@openssh.com,webauthn-sk-ecdsa-sha2-nistp256@openssh.com,"+
	"ssh-dss,ssh-dss-cert-v01@openssh.com,ssh-rsa,ssh-rsa-cert-v01@openssh.com,rsa-sha2-256,rsa-sha2-256-cert-v01@openssh.com,"+
	"rsa-sha2-512,rsa-sha2-512-cert-v01@openssh.com", ",")

// defaultHostKeyAlgorithms is OpenSSH 9.2's default HostKeyAlgorithms
// (ssh -G shows it): no ssh-rsa (SHA-1), refused since OpenSSH 8.8.
var defaultHostKeyAlgorithms = strings.Split("ssh-ed25519-cert-v01@openssh.com,ecdsa-sha2-nistp256-cert-v01@openssh.com,"+
	"ecdsa-sha2-nistp384-cert-v01@openssh.com,ecdsa-sha2-nistp521-cert-v01@openssh.com,sk-ssh-ed25519-cert-v01@openssh.com,"+
	"sk-ecdsa-sha2-nistp256-cert-v01@openssh.com,rsa-sha2-512-cert-v01@openssh.com,rsa-sha2-256-cert-v01@openssh.com,"+
	"ssh-ed25519,ecdsa-sha2-nistp256,ecdsa-sha2-nistp384,ecdsa-sha2-nistp521,sk-ssh-ed25519@openssh.com,"+
	"sk-ecdsa-sha2-nistp256@openssh.com,rsa-sha2-512,rsa-sha2-256", ",")

// sshCASignatureAlgorithms are the algorithms a CASignatureAlgorithms
// pattern is matched against: ssh's, certificates left out.
var sshCASignatureAlgorithms = slices.DeleteFunc(slices.Clone(sshHostKeyAlgorithms), func(a string) bool { return strings.Contains(a, "-cert-") })

// assembleAlgorithms is the list ssh makes of value, a HostKeyAlgorithms
// or CASignatureAlgorithms value, over def, its default, each pattern
// matched against all; reorder is whether ssh then puts first the
// algorithms of the keys known_hosts lists for the host (sshconnect2.c,
// ssh_kex2: for no value, or a +list or -list). An error is a value ssh
// refuses: an algorithm it does not know (names are matched case kept),
// a pattern matching none, a negated one (!name), no name, nothing left.
func assembleAlgorithms(value string, def, all []string) (list []string, reorder bool, err error) {
	if value == "" {
		return slices.Clone(def), true, nil
	}
	op, names := value[0], value
	if op == '+' || op == '-' || op == '^' {
		names = value[1:]
	}
	pats := strings.Split(names, ",")
	if op == '-' {
		// no name is checked: one ssh does not know takes nothing
		given := strings.Join(slices.DeleteFunc(slices.Clone(pats), func(p string) bool { return p == "" }), ",")
		for _, a := range def {
			if m, _ := matchList(given, []string{a}); given == "" || !m {
				list = append(list, a)
			}
		}
		if len(list) == 0 {
			return nil, false, errors.New("it takes every algorithm from the default, leaving none to ask for")
		}
		return list, true, nil
	}
	named := false
	for _, p := range pats {
		switch {
		case p == "":
			continue
		case strings.HasPrefix(p, "!"):
			return nil, false, fmt.Errorf("%q is negated, which ssh refuses here (\"invalid argument\"); write -%s to take it from the default", p, p[1:])
		case strings.ContainsAny(p, "*?"):
			if !slices.ContainsFunc(sshHostKeyAlgorithms, func(a string) bool { return sshPatternMatch(a, p) }) {
				return nil, false, fmt.Errorf("the pattern %q matches no algorithm ssh knows, which ssh refuses (\"Bad key types\"); ssh -Q HostKeyAlgorithms lists them", p)
			}
		case !slices.Contains(sshHostKeyAlgorithms, p):
			return nil, false, fmt.Errorf("%q is no algorithm ssh knows, which ssh refuses (\"Bad key types\"; names are in lower case); ssh -Q HostKeyAlgorithms lists them", p)
		}
		named = true
	}
	if !named {
		return nil, false, errors.New("it names no algorithm, which ssh refuses (\"Bad key types\")")
	}
	switch op {
	case '+':
		pats = append(slices.Clone(def), pats...)
	case '^':
		pats = append(pats, def...)
	}
	for _, p := range pats {
		for _, a := range all {
			if sshPatternMatch(a, p) && !slices.Contains(list, a) {
				list = append(list, a)
			}
		}
	}
	if len(list) == 0 {
		// a certificate's name as a CA signature algorithm
		return nil, false, fmt.Errorf("it leaves no algorithm ssh takes here, which ssh refuses (\"invalid argument\"): one of %s", strings.Join(all, ","))
	}
	return list, op == '+', nil
}

// algorithmsFor is the list the first line giving key (HostKeyAlgorithms
// or CASignatureAlgorithms) for alias makes (assembleAlgorithms), def for
// none; set are the host's settings (firstsWithWords). An error names the
// line.
func algorithmsFor(set map[string]setting, alias, key string, def, all []string) ([]string, bool, error) {
	st, ok := set[key]
	if !ok {
		return assembleAlgorithms("", def, all)
	}
	args, _ := sshArgs(st.value) // a quote not closed is refusedLine's
	var err error
	var list []string
	reorder := false
	if len(args) != 1 {
		err = errors.New("more than one word, which ssh refuses (\"garbage at end of line\"); separate the names with commas")
	} else {
		list, reorder, err = assembleAlgorithms(args[0], def, all)
	}
	if err != nil {
		return nil, false, &SSHConfigError{File: st.file, Line: st.line, Host: alias, Key: key, Value: st.value,
			Err: fmt.Errorf("%s%w: ssh connects to no host then, so readproof does not either; fix the line (ssh -G HOST shows how ssh reads it)", st.readThrough(), err)}
	}
	return list, reorder, nil
}

// hostKeyAlgorithmsGo are the host key algorithms x/crypto speaks: those
// ssh asks for that it lacks (sk-, ssh-dss) are not asked for.
func hostKeyAlgorithmsGo() []string {
	return append(ssh.SupportedAlgorithms().HostKeys, ssh.InsecureAlgorithms().HostKeys...)
}

// algorithmKeyType is the key type an algorithm signs with: an RSA key's
// for rsa-sha2-256 and rsa-sha2-512, and an RSA certificate's for theirs
// (rsaTypeNames).
func algorithmKeyType(a string) string {
	if t, ok := rsaTypeNames[a]; ok {
		return t
	}
	return a
}
