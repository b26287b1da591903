package gitstore

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/readproof/readproof/internal/hint"
)

// ErrPackfileURI: a remote answered a fetch with the URL of a pack to
// download from elsewhere (protocol v2's packfile URIs). Git 2.39
// downloads each such URL (git http-fetch) whether or not it asked for
// one, wherever it points, so a remote could make the machine that pulls
// contact any address it reaches: a cloud's metadata address, a service
// inside a CI runner's network. readproof's fetches do not let git reach
// any address but the remote's own (fetchGuard); the fetch fails instead.
var ErrPackfileURI = errors.New("the remote answered with the URL of a pack to download from elsewhere (packfile URIs)")

// refusingProxy is the proxy a fetch's git is given for every URL but the
// remote's own: nothing listens on port 0, so curl fails at once and
// nothing is sent anywhere.
const refusingProxy = "http://127.0.0.1:0"

// proxyEnv carries the remote's own proxy to git (--config-env, so a URL
// with an '=' is not split).
const proxyEnv = "READPROOF_GIT_REMOTE_PROXY"

// refusingEnv carries refusingProxy to git for the user's per-URL proxy
// settings (--config-env, for the same reason).
const refusingEnv = "READPROOF_GIT_REFUSING_PROXY"

// fetchGuard returns the git options (before the command) and the
// environment that keep a `git fetch` from remote (a configured remote's
// name, a URL or a path) from downloading a pack from any address but the
// remote's own. Git takes a packfile URI from any protocol v2 answer and
// runs git http-fetch on it with the fetch's configuration, using curl as
// for an http(s) remote:
//
//   - from a remote that is not http(s) (git://, ssh, a path), curl is
//     allowed no protocol at all (protocol.{http,https,ftp,ftps}.allow=never,
//     which git turns into curl's list of allowed protocols for each
//     handle, http-fetch's included; the user's GIT_ALLOW_PROTOCOL,
//     which git lets decide over those settings, loses them too);
//   - from an http(s) remote, every URL goes through a proxy that refuses
//     (refusingProxy) but the remote's own (http.<url>.proxy, the most
//     specific match git's per-URL settings allow), which keeps the proxy
//     the user's git would use for it (the user's http.proxy settings and
//     http_proxy, https_proxy, all_proxy and no_proxy variables). The
//     no_proxy variables are emptied, as curl would otherwise go straight
//     to the hosts they name, and each proxy the user's configuration
//     names for other URLs (http.<url>.proxy) is replaced by the refusing
//     one. A pack URL on the remote's own host and port under its path
//     is still fetched: the remote's server is the one asked.
//
// ftp and ftps, which git would also let curl use, are refused in both.
// A remote helper's URL (<transport>::<address>) is left to its helper,
// which may itself fetch over http(s) from an address only it knows.
func (t *Transport) fetchGuard(ctx context.Context, remote string) (opts, env []string) {
	opts = []string{"-c", "protocol.ftp.allow=never", "-c", "protocol.ftps.allow=never"}
	url := remote
	if !isHTTPURL(url) && CheckRemoteName(remote) == nil {
		if u, err := t.configFrom().RemoteFetchURL(ctx, remote); err == nil {
			url = u
		}
	}
	if _, helper := remoteHelper(url); helper {
		// a remote helper's URL (codecommit::, persistent-https::) names
		// an address only the helper knows, which it may reach over
		// http(s) itself: it is the helper's to guard
		return opts, nil
	}
	if !isHTTPURL(url) {
		return append(opts, "-c", "protocol.http.allow=never", "-c", "protocol.https.allow=never"), allowProtocolEnv("http", "https", "ftp", "ftps")
	}
	// git's argv is for any user of the machine to read (ps): the URL
	// is named there without its password, nor a user name that is an
	// access token (a CI runner's url.<base>.insteadOf often adds one),
	// which matches the same URLs (git's per-URL settings ignore the
	// password; one naming no user matches every user)
	url = withoutSecret(url, true)
	g := t.proxyGuard(ctx, url)
	opts = append(opts, "-c", "http.proxy="+refusingProxy)
	for _, key := range g.userKeys {
		opts = append(opts, "--config-env="+key+"="+refusingEnv)
	}
	opts = append(opts, "--config-env=http."+url+".proxy="+proxyEnv)
	return opts, append([]string{proxyEnv + "=" + g.remote, refusingEnv + "=" + refusingProxy, "NO_PROXY=", "no_proxy="}, allowProtocolEnv("ftp", "ftps")...)
}

// allowProtocolEnv is GIT_ALLOW_PROTOCOL, when the user sets it, without
// the protocols drop: git lets that list decide over every
// protocol.<name>.allow setting, the guard's included, so a list that
// names https would let a git:// remote's pack URL through.
func allowProtocolEnv(drop ...string) []string {
	list, ok := os.LookupEnv("GIT_ALLOW_PROTOCOL")
	if !ok {
		return nil
	}
	var keep []string
	for _, p := range strings.Split(list, ":") {
		if !slices.Contains(drop, strings.ToLower(p)) {
			keep = append(keep, p)
		}
	}
	return []string{"GIT_ALLOW_PROTOCOL=" + strings.Join(keep, ":")}
}

// proxyGuard is what fetchGuard reads of the user's proxy settings for
// an http(s) remote's URL: the proxy for that URL (remoteProxy) and the
// per-URL proxy settings to override (userProxyKeys).
type proxyGuard struct {
	remote   string
	userKeys []string
}

// proxyGuard reads the user's proxy settings for url: two `git config`
// processes, asked once for the transport's life when it serves one
// command (OneCommand). A ref view and the probe's scratch repository ask
// their store's transport (urlsFrom), whose configuration is the one the
// user's git reads for the store.
func (t *Transport) proxyGuard(ctx context.Context, url string) proxyGuard {
	keep := t.configFrom()
	keep.urlsMu.Lock()
	g, ok := keep.proxies[url]
	keep.urlsMu.Unlock()
	if ok {
		return g
	}
	g = proxyGuard{remote: keep.remoteProxy(ctx, url), userKeys: keep.userProxyKeys(ctx)}
	keep.urlsMu.Lock()
	if keep.keepURLs {
		if keep.proxies == nil {
			keep.proxies = map[string]proxyGuard{}
		}
		keep.proxies[url] = g
	}
	keep.urlsMu.Unlock()
	return g
}

// configFrom is the transport whose configuration t's fetch guard reads
// and whose answers it keeps: urlsFrom when set (a ref view's or the
// probe's store), else t.
func (t *Transport) configFrom() *Transport {
	if t.urlsFrom != nil {
		return t.urlsFrom
	}
	return t
}

// isHTTPURL reports whether url is an http:// or https:// URL.
func isHTTPURL(url string) bool {
	l := strings.ToLower(url)
	return strings.HasPrefix(l, "http://") || strings.HasPrefix(l, "https://")
}

// userProxyKeys lists the per-URL proxy settings of the configuration git
// reads (http.<url>.proxy), which are more specific than http.proxy.
func (t *Transport) userProxyKeys(ctx context.Context) []string {
	out, err := t.run(ctx, false, "config", "--null", "--name-only", "--get-regexp", `^http\..+\.proxy$`)
	if err != nil {
		return nil
	}
	var keys []string
	for _, k := range strings.Split(string(out), "\x00") {
		// a key whose URL holds an '=' is given with --config-env, which
		// git splits at its last '='
		if k != "" && !strings.Contains(k, "\n") {
			// its user name stays: a setting naming none would match
			// less closely than the user's, and not replace it
			keys = append(keys, "http."+withoutSecret(strings.TrimSuffix(strings.TrimPrefix(k, "http."), ".proxy"), false)+".proxy")
		}
	}
	return keys
}

// remoteProxy is the proxy git would use for url without fetchGuard ("":
// none), as git 2.39's http.c chooses it: http.proxy as it matches url
// (a per-URL setting or not), else https_proxy or HTTPS_PROXY for an
// https URL, http_proxy for http, else all_proxy or ALL_PROXY; none when
// no_proxy or NO_PROXY names url's host.
func (t *Transport) remoteProxy(ctx context.Context, url string) string {
	proxy, set := "", false
	if out, err := t.run(ctx, false, "config", "--get-urlmatch", "http.proxy", url); err == nil {
		proxy, set = strings.TrimRight(string(out), "\n"), true
	}
	if !set {
		names := []string{"http_proxy"}
		if strings.HasPrefix(strings.ToLower(url), "https://") {
			names = []string{"https_proxy", "HTTPS_PROXY"}
		}
		proxy, set = firstEnv(names...)
		if !set {
			proxy, _ = firstEnv("all_proxy", "ALL_PROXY")
		}
	}
	if proxy == "" {
		return ""
	}
	if list, _ := firstEnv("no_proxy", "NO_PROXY"); noProxyMatches(list, urlHost(url)) {
		return ""
	}
	return proxy
}

// firstEnv is the value of the first of names that is set.
func firstEnv(names ...string) (string, bool) {
	for _, n := range names {
		if v, ok := os.LookupEnv(n); ok {
			return v, true
		}
	}
	return "", false
}

// urlHost is the host of an http(s) URL, without user, port or brackets.
func urlHost(url string) string {
	rest := urlHostPort(url)
	if h, _, err := net.SplitHostPort(rest); err == nil {
		return h
	}
	return strings.Trim(rest, "[]")
}

// noProxyMatches reports whether curl's no_proxy list names host: "*", a
// host name or a domain (with or without its leading dot) that host is or
// ends in, an address, or a CIDR range holding it.
func noProxyMatches(list, host string) bool {
	host = strings.ToLower(strings.TrimSuffix(host, "."))
	ip := net.ParseIP(host)
	for _, e := range strings.FieldsFunc(list, func(r rune) bool { return r == ',' || r == ' ' || r == '\t' }) {
		e = strings.ToLower(strings.TrimSuffix(strings.TrimPrefix(e, "."), "."))
		switch {
		case e == "*":
			return true
		case strings.Contains(e, "/"):
			if _, n, err := net.ParseCIDR(e); err == nil && ip != nil && n.Contains(ip) {
				return true
			}
		case e != "" && (host == strings.Trim(e, "[]") || strings.HasSuffix(host, "."+e)):
			return true
		}
	}
	return false
}

// fetchRemote returns the remote of args when they are a `git fetch` (the
// argument after "--", as every fetch of a transport gives it).
func fetchRemote(args []string) (string, bool) {
	for i := 0; i < len(args); i++ {
		switch a := args[i]; {
		case a == "-c":
			i++
		case strings.HasPrefix(a, "-"):
		case a != "fetch":
			return "", false
		default:
			for j := i + 1; j+1 < len(args); j++ {
				if args[j] == "--" {
					return args[j+1], true
				}
			}
			return "", false
		}
	}
	return "", false
}

// packURLLine finds git http-fetch's words for the URL it could not
// download: "failed to get 'SCHEME' url from 'HOST'" (git hides the rest
// of the URL, which may hold a signed URL's token, unless
// GIT_TRACE_REDACT=0), or "unable to get pack file 'URL'".
var packURLLine = regexp.MustCompile(`failed to get '[^'\s]*' url from '([^'\s]*)'|unable to get pack file '([^'\s]*)'`)

// guardRefused finds curl's words for a download the guard refused: a
// connection to refusingProxy, or a protocol git did not allow it.
var guardRefused = regexp.MustCompile(`127\.0\.0\.1 port 0\b|Protocol "[^"\s]*" (not supported|disabled)`)

// packTemps lists git http-fetch's downloads in the object directory's
// pack/ (pack-HASH.pack.temp), which a fetch that dies while it downloads
// packs by their URLs leaves behind.
func packTemps(objects string) map[string]bool {
	out := map[string]bool{}
	dir := filepath.Join(objects, "pack")
	names, _ := readDirNames(dir)
	for _, n := range names {
		if isPackDownload(n) {
			out[filepath.Join(dir, n)] = true
		}
	}
	return out
}

// isPackDownload is whether n names a pack git http-fetch is downloading
// by its URL (pack-HASH.pack.temp).
func isPackDownload(n string) bool {
	return strings.HasPrefix(n, "pack-") && strings.HasSuffix(n, ".pack.temp")
}

// removeFetchKeeps removes the .keep files in the object directory's
// pack/ that the git fetch of process pid wrote ("fetch-pack PID on
// HOST") and, having failed, left: git keeps the pack it received from
// gc while the fetch runs (while it downloads packs by their URLs, or
// when fetch.unpackLimit keeps it), and removes the .keep only at the
// fetch's end, so a fetch stopped or refused in between kept its pack for
// ever. The pack stays, unreachable, for gc to prune.
func removeFetchKeeps(objects string, pid int) {
	dir := filepath.Join(objects, "pack")
	names, _ := readDirNames(dir)
	mark := "fetch-pack " + strconv.Itoa(pid) + " on "
	for _, n := range names {
		if !strings.HasPrefix(n, "pack-") || !strings.HasSuffix(n, ".keep") {
			continue
		}
		f := filepath.Join(dir, n)
		if b, err := readSmallFile(f, 4096); err == nil && strings.HasPrefix(string(b), mark) {
			os.Remove(f)
		}
	}
}

// packfileURIRefused is err, of a git fetch from remote that fetchGuard
// guarded, as ErrPackfileURI when git failed because it was refused the
// download of a pack by its URL (git's fetch-pack then names
// "http-fetch", and curl tells of the guard's refusal, guardRefused); the
// downloads that fetch left in objects/pack (packTemps, those not in
// before) are removed whenever http-fetch failed. objects is the object
// directory.
func packfileURIRefused(err error, objects, remote string, before map[string]bool) error {
	var ge *GitError
	if !errors.As(err, &ge) || !strings.Contains(ge.Stderr, "http-fetch") {
		return err
	}
	for f := range packTemps(objects) {
		if !before[f] {
			os.Remove(f)
		}
	}
	if !guardRefused.MatchString(ge.Stderr) {
		// a pack URL the guard let through (on the remote's own server)
		// that failed there is the remote's failure, told as git tells it
		return err
	}
	host := "an address it named"
	if m := packURLLine.FindStringSubmatch(ge.Stderr); m != nil {
		if m[1] != "" {
			host = m[1]
		} else if h := urlHostPort(m[2]); h != "" {
			host = h
		}
	}
	return hint.With(fmt.Errorf("%w: %s asked for a pack to be downloaded from %s, which readproof does not let git contact: %w", ErrPackfileURI, RedactURL(remote), host, err),
		"no run, resource, tag or journal ref moved; a remote sends pack URLs only when its server is set up to (uploadpack.blobPackfileUri): ask its operator to turn that off, or pull from another copy of the store")
}

// withoutSecret is url without the password of its user information and,
// when token is set, without a user name that is an access token
// (accessTokenUser).
func withoutSecret(url string, token bool) string {
	scheme, rest, ok := strings.Cut(url, "://")
	if !ok {
		return url
	}
	auth := rest
	if i := strings.IndexAny(auth, "/?#"); i >= 0 {
		auth = auth[:i]
	}
	at := strings.LastIndexByte(auth, '@')
	if at < 0 {
		return url
	}
	user, _, _ := strings.Cut(auth[:at], ":")
	if token && accessTokenUser(user) {
		return scheme + "://" + rest[at+1:]
	}
	return scheme + "://" + user + rest[at:]
}

// urlHostPort is the host and port of a URL as written in it.
func urlHostPort(url string) string {
	_, rest, _ := strings.Cut(url, "://")
	if i := strings.IndexAny(rest, "/?#"); i >= 0 {
		rest = rest[:i]
	}
	if i := strings.LastIndexByte(rest, '@'); i >= 0 {
		rest = rest[i+1:]
	}
	return rest
}

// objectDir is the object directory git is given.
func (t *Transport) objectDir() string {
	if t.objects != "" {
		return t.objects
	}
	return filepath.Join(t.dir, "objects")
}
