package gitstore

import (
	"strings"

	"github.com/kevinburke/ssh_config"
)

// keepWordHashes gives each line of c, decoded from data, the value ssh
// reads where the parser cut it at a # inside a word: the parser takes
// every # for a comment, ssh (misc.c, argv_split) only one at a word's
// start, outside quotes, so IdentityFile ~/x#y names ~/x#y to ssh and
// ~/x to the parser.
func keepWordHashes(c *ssh_config.Config, data []byte) {
	lines := strings.Split(string(data), "\n")
	for _, h := range c.Hosts {
		keepHostHashes(h, lines)
	}
	for _, h := range c.Hosts {
		for _, n := range h.Nodes {
			kv, ok := n.(*ssh_config.KV)
			if !ok || kv.Comment == "" {
				continue
			}
			at := kv.Pos().Line - 1
			if at < 0 || at >= len(lines) {
				continue
			}
			v := sshLineValue(lines[at])
			if v != kv.Value && strings.HasPrefix(v, kv.Value) {
				kv.Value = v
			}
		}
	}
}

// sshLineValue is what follows the keyword of a configuration line, up
// to a # at a word's start outside quotes, spaces around it left out.
func sshLineValue(l string) string {
	l = strings.TrimLeft(l, " \t\r")
	i := strings.IndexAny(l, " \t\r=")
	if i < 0 {
		return ""
	}
	l = strings.TrimLeft(l[i:], " \t\r")
	if strings.HasPrefix(l, "=") {
		l = strings.TrimLeft(l[1:], " \t\r")
	}
	var quote byte
	start := true
	for j := 0; j < len(l); j++ {
		c := l[j]
		switch {
		case quote != 0:
			if c == quote {
				quote = 0
			}
		case c == '#' && start:
			return trimSSHValue(l[:j])
		case c == '\\' && j+1 < len(l):
			j++
		case c == '"' || c == '\'':
			quote = c
		}
		start = quote == 0 && (c == ' ' || c == '\t' || c == '\r')
	}
	return trimSSHValue(l)
}

// trimSSHValue is v without the spaces that end it, but for one a
// backslash stands before, which is part of the last word.
func trimSSHValue(v string) string {
	t := strings.TrimRight(v, " \t\r")
	if len(t) < len(v) && strings.HasSuffix(t, "\\") {
		t = v[:len(t)+1]
	}
	return t
}

// keepHostHashes gives the Host line of h the patterns ssh reads where
// the parser cut them at a # inside a word: Host foo#bar applies to
// foo#bar only, not to foo (before rr1's re-read of session 29 readproof
// applied its block to foo, whose fetch ssh does not give its Hostname,
// Port or IdentityFile). The Host line is the one before the block's
// first line; a line with quotes or backslashes is left as parsed.
func keepHostHashes(h *ssh_config.Host, lines []string) {
	if h.EOLComment == "" || len(h.Nodes) == 0 || isMatchStandIn(h) {
		return
	}
	at := h.Nodes[0].Pos().Line - 2
	if at < 0 || at >= len(lines) {
		return
	}
	l := strings.TrimLeft(lines[at], " \t\r")
	if len(l) < 5 || !strings.EqualFold(l[:4], "host") || !strings.ContainsRune(" \t=", rune(l[4])) {
		return
	}
	v := sshLineValue(l)
	if strings.ContainsAny(v, "\"'\\") {
		return
	}
	var pats []*ssh_config.Pattern
	for _, w := range strings.Fields(v) {
		p, err := ssh_config.NewPattern(w)
		if err != nil {
			return
		}
		pats = append(pats, p)
	}
	if len(pats) > 0 {
		h.Patterns = pats
	}
}
