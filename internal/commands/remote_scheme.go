package commands

import (
	"errors"
	"os/exec"
	"strings"

	"github.com/readproof/readproof/gitstore"
	"github.com/readproof/readproof/internal/hint"
	"github.com/readproof/readproof/internal/text"
)

// gitSchemes are the URL schemes git speaks itself; a URL of another scheme
// runs the remote helper git-remote-<scheme>.
func gitSchemes() []string { return []string{"http", "https", "git", "ssh", "file"} }

// schemeTypo is the warning of `remote add NAME URL` when url's scheme is
// probably a typo, nil when it is not: a scheme within one edit (or one swap)
// of one git knows ("htps://", "HTTPS://", for which git runs a helper
// git-remote-htps that is not installed), or a known scheme with one slash
// ("https:/host/x", which git reads as ssh host "https"). The remote is added
// all the same: git-remote-<scheme> may be the user's own helper, and an
// installed one on PATH silences the warning.
func schemeTypo(name, url string) error {
	i := 0
	for i < len(url) && isSchemeChar(url[i], i == 0) {
		i++
	}
	if i == 0 || i == len(url) || url[i] != ':' {
		return nil
	}
	scheme, rest := url[:i], url[i+1:]
	var meant, why string
	switch {
	case strings.HasPrefix(rest, "//"):
		known := nearScheme(scheme)
		if known == "" {
			return nil
		}
		if _, err := exec.LookPath("git-remote-" + scheme); err == nil {
			return nil
		}
		meant = known + ":" + rest
		why = `"` + scheme + `" is not a scheme git knows (git would run the remote helper git-remote-` + scheme + `, not installed)`
	case strings.HasPrefix(rest, "/"):
		known := nearScheme(scheme)
		if known == "" {
			known = strings.ToLower(scheme)
			if !isGitScheme(known) {
				return nil
			}
		}
		if known == "file" {
			meant = "file://" + rest
		} else {
			meant = known + ":/" + rest
		}
		why = `"` + url + `" has one slash after "` + scheme + `:": git reads it as ssh host "` + scheme + `", path "` + rest + `"`
	default:
		return nil
	}
	why, meant = gitstore.RedactURL(why), gitstore.RedactURL(meant)
	err := errors.New("remote " + name + ": " + why + ": did you mean " + meant + "?")
	return hint.With(err, "the remote is added as given; to use "+text.Escape(meant)+" instead, run `readproof remote rm "+name+"`, then `readproof remote add "+name+" "+text.ShellArg(meant)+"`")
}

// nearScheme is the scheme git knows that s is a near-typo of (in any
// case, at most one edit or one swap of adjacent letters away), "" if none or
// s is one.
func nearScheme(s string) string {
	if isGitScheme(s) {
		return ""
	}
	l, near, best := strings.ToLower(s), "", 2
	for _, k := range gitSchemes() {
		if d := text.EditDistance(l, k); d < best {
			near, best = k, d
		}
	}
	return near
}

func isGitScheme(s string) bool {
	for _, k := range gitSchemes() {
		if s == k {
			return true
		}
	}
	return false
}

// isSchemeChar is git's is_urlschemechar: a letter first, then letters,
// digits, '+', '-' and '.'.
func isSchemeChar(c byte, first bool) bool {
	switch {
	case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z':
		return true
	case first:
		return false
	}
	return '0' <= c && c <= '9' || c == '+' || c == '-' || c == '.'
}
