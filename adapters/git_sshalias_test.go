package adapters

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"strings"
	"testing"
	"time"

	gitssh "github.com/go-git/go-git/v5/plumbing/transport/ssh"

	"github.com/readproof/readproof/gitstore"
)

// sshConfigOf is an ~/.ssh/config: per host alias, its keywords.
type sshConfigOf map[string]map[string]string

func (c sshConfigOf) Get(alias, key string) string { return c[alias][key] }

// An ssh source whose host ~/.ssh/config names another Hostname is fetched
// from that Hostname (README: "~/.ssh/config's Hostname and Port for the
// host are followed"), so the check before the fetch is of the Hostname
// too: an alias with no DNS answer of its own is not refused as
// unresolvable, and the address it leads to meets [network] there, as at
// the connection. (readproof reads $HOME/.ssh/config unless go-git's
// reader, gitssh.DefaultSSHConfig, has been swapped: the test swaps it, so
// it does not run in parallel.)
func TestGitSSHAliasCheckedOnHostname(t *testing.T) {
	old := gitssh.DefaultSSHConfig
	gitssh.DefaultSSHConfig = sshConfigOf{"gitalias.invalid": {"Hostname": "10.9.8.7", "Port": "2222"}}
	t.Cleanup(func() { gitssh.DefaultSSHConfig = old })
	for _, u := range []string{"ssh://git@gitalias.invalid/docs.git", "git@gitalias.invalid:docs.git"} {
		src, err := openGit(Spec{Type: "git", URL: u, Path: "README"}, Env{CacheDir: t.TempDir(), Network: NetPolicy{Timeout: 5 * time.Second}})
		if err != nil {
			t.Fatal(err)
		}
		gs, ok := src.(*gitSource)
		if !ok {
			t.Fatalf("%s opened as %T", u, src)
		}
		var asked []string
		gs.n.g.lookup = func(_ context.Context, host string) ([]netip.Addr, error) {
			asked = append(asked, host)
			return nil, &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
		}
		_, err = gs.Fetch(context.Background(), Request{URI: "readproof://t/alias"})
		if len(asked) != 0 || !errors.Is(err, ErrRefused) || !strings.Contains(err.Error(), "10.9.8.7 is a private (RFC 1918) address") {
			t.Errorf("%s: looked up %q, fetch error %v; want the Hostname 10.9.8.7 refused as private, no look-up of the alias", u, asked, err)
		}
	}
}

// A git source whose ssh server took none of the keys offered says which
// were offered and which were not, for which user and host, and ends in
// what to do.
func TestGitSSHAuthErrorNamesKeys(t *testing.T) {
	t.Parallel()
	src, err := openGit(Spec{Type: "git", URL: "ssh://deploy@git.example.test/docs.git", Path: "README"}, Env{CacheDir: t.TempDir(), Network: NetPolicy{Timeout: 5 * time.Second}})
	if err != nil {
		t.Fatal(err)
	}
	refused := &gitstore.SSHAuthError{User: "deploy", Host: "git.example.test:22",
		Offered: []string{"/home/ci/.ssh/id_ed25519"},
		Skipped: []string{"/home/ci/.ssh/id_rsa is encrypted: load it into ssh-agent (ssh-add /home/ci/.ssh/id_rsa)"},
		Err:     errors.New("test: unable to authenticate")}
	err = src.(*gitSource).fetchErr(context.Background(), "readproof://t/k", fmt.Errorf("%w (%w)", gitstore.ErrAuth, refused))
	for _, want := range []string{`user "deploy"`, "git.example.test:22", "offered: /home/ci/.ssh/id_ed25519", "id_rsa is encrypted: load it into ssh-agent", "authorized keys for deploy", "IdentityFile"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("%v\ndoes not say %q", err, want)
		}
	}
	if !errors.As(err, &refused) {
		t.Errorf("%v does not wrap the SSHAuthError", err)
	}
}

// An IdentityFile line readproof will not expand is the user's ssh
// configuration to fix, said as such: not a damaged cache.
func TestGitSSHConfigErrorNotACacheProblem(t *testing.T) {
	t.Parallel()
	src, err := openGit(Spec{Type: "git", URL: "git@git.example.test:docs.git", Path: "README"}, Env{CacheDir: t.TempDir(), Network: NetPolicy{Timeout: 5 * time.Second}})
	if err != nil {
		t.Fatal(err)
	}
	bad := &gitstore.SSHConfigError{File: "/home/ci/.ssh/config", Host: "git.example.test", Value: "~/.ssh/%C", Err: errors.New("readproof expands only %d %u %h %r and %% in it, not %C; write the path out")}
	err = src.(*gitSource).fetchErr(context.Background(), "readproof://t/k", fmt.Errorf("git mirror: %w", bad))
	if msg := err.Error(); !strings.Contains(msg, `/home/ci/.ssh/config: IdentityFile "~/.ssh/%C" for host git.example.test`) || strings.Contains(msg, "cache") || !strings.HasSuffix(msg, "write the path out") {
		t.Errorf("%v\nwant the ssh configuration named and no word of the cache", err)
	}
}
