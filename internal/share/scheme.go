package share

import (
	"errors"
	"os/exec"
	"slices"
	"strings"

	"github.com/readproof/readproof/gitstore"
	"github.com/readproof/readproof/internal/hint"
	"github.com/readproof/readproof/internal/text"
)

// gitSchemes are the URL schemes git speaks itself; a URL of another scheme
// runs the remote helper git-remote-<scheme>.
func gitSchemes() []string { return []string{"http", "https", "git", "ssh", "file"} }

// SchemeTypo is the warning of `remote add NAME URL` when url's scheme is
// probably a typo, nil when it is not (schemeSuspect says when). The remote
// is added all the same: git-remote-<scheme> may be the user's own helper,
// and an installed one on PATH silences the warning.
func SchemeTypo(name, url string) error {
	meant, why := schemeSuspect(url)
	if meant == "" {
		return nil
	}
	err := errors.New("remote " + name + ": " + why + ": did you mean " + meant + "?")
	return hint.With(err, "the remote is added as given; to use "+text.Escape(meant)+" instead, run `readproof remote rm "+name+"`, then "+addCommand(name, url, meant))
}

// addCommand is `readproof remote add NAME URL` for the URL url meant
// (meant, redacted), to paste: when redacting took user information out of
// it, URL stands in for it (pasted, the redacted URL names a user
// "[REDACTED]").
func addCommand(name, url, meant string) string {
	if raw, _ := mendScheme(url); raw != meant {
		return "`readproof remote add " + name + " URL` with that URL, its user name as you gave it"
	}
	return "`readproof remote add " + name + " " + text.ShellArg(meant) + "`"
}

// schemeHint is the hint of a failure to reach url when its scheme is
// probably a typo, with how to use the URL it meant (then, given that URL,
// or URL when it is shown redacted): "" when it is not. Called on the failure path only: it may look for a helper on PATH.
func schemeHint(url string, then func(meant string) string) string {
	meant, why := schemeSuspect(url)
	if meant == "" {
		return ""
	}
	arg := meant
	if raw, _ := mendScheme(url); raw != meant {
		// pasted, the redacted URL would name a user "[REDACTED]"
		arg = "URL"
	}
	return text.Escape(why) + ": did you mean " + text.Escape(meant) + "? " + then(arg)
}

// remoteSchemeHint is schemeHint for configured remote name: replace it.
func remoteSchemeHint(url, name string) string {
	return schemeHint(url, func(arg string) string {
		// arg is the URL meant or "URL": addCommand says which to paste
		return "replace the remote: `readproof remote rm " + name + "`, then " + addCommand(name, url, arg)
	})
}

// schemeSuspect is the URL url probably meant and why, "" when its scheme
// is not probably a typo (mendScheme). Both are redacted of a password.
func schemeSuspect(url string) (meant, why string) {
	meant, why = mendScheme(url)
	return gitstore.RedactURL(meant), gitstore.RedactURL(why)
}

// mendScheme is the URL url probably meant, as given (a password in it
// kept), and why, "" when its scheme is not probably a typo: a scheme within
// one edit (or one swap) of one git knows ("htps://", "HTTPS://", for which
// git runs a helper git-remote-htps that is not installed), or a known
// scheme, in any case, with one slash ("https:/host/x", which git reads as
// ssh host "https"; not a near-typo of one, git1:/srv/x being an ssh host
// and path as likely). why shows url's user information redacted.
func mendScheme(url string) (meant, why string) {
	i := 0
	for i < len(url) && isSchemeChar(url[i], i == 0) {
		i++
	}
	if i == 0 || i == len(url) || url[i] != ':' {
		return "", ""
	}
	scheme, rest := url[:i], url[i+1:]
	switch {
	case strings.HasPrefix(rest, "//"):
		known := nearScheme(scheme)
		if known == "" {
			return "", ""
		}
		if _, err := exec.LookPath("git-remote-" + scheme); err == nil {
			return "", ""
		}
		meant = known + ":" + rest
		why = `"` + scheme + `" is not a scheme git knows (git would run the remote helper git-remote-` + scheme + `, not installed)`
	case strings.HasPrefix(rest, "/"):
		// a scheme git knows, in any case: a near-typo (git1:/srv/x,
		// sh:/srv/x) is as likely an ssh host of that name
		known := strings.ToLower(scheme)
		if !isGitScheme(known) {
			return "", ""
		}
		if known == "file" {
			meant = "file://" + rest
		} else {
			meant = known + ":/" + rest
		}
		// rest redacted as the URL meant is: RedactURL does not see a
		// user:password@ after one slash
		shown := strings.TrimPrefix(gitstore.RedactURL(known+":/"+rest), known+":/")
		why = `"` + scheme + ":" + shown + `" has one slash after "` + scheme + `:": git reads it as ssh host "` + scheme + `", path "` + shown + `"`
	default:
		return "", ""
	}
	return meant, why
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

func isGitScheme(s string) bool { return slices.Contains(gitSchemes(), s) }

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
