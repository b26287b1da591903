package gitstore

import (
	"crypto/ed25519"
	"crypto/rand"
	"math/big"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/crypto/ssh"
	"golang.org/x/crypto/ssh/agent"
)

// listingAgent is an ssh agent that lists, beside its keyring's keys,
// extra public keys whose private halves it does not hold, as ssh-agent
// lists a DSA key added with ssh-add (x/crypto's keyring takes none).
type listingAgent struct {
	agent.Agent
	extra []*agent.Key
}

func (a listingAgent) List() ([]*agent.Key, error) {
	keys, err := a.Agent.List()
	return append(keys, a.extra...), err
}

// serveListingAgent serves a on a unix socket and sets SSH_AUTH_SOCK to it.
func serveListingAgent(t *testing.T, a listingAgent) {
	t.Helper()
	sock := testAgent(t)
	_ = os.Remove(sock)
	ln, err := net.Listen("unix", sock)
	if err != nil {
		t.Skipf("no unix socket: %v", err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() { defer c.Close(); _ = agent.ServeAgent(a, c) }()
		}
	}()
	t.Setenv("SSH_AUTH_SOCK", sock)
}

// dssAgentKey is a DSA public key as an agent lists it (ssh-dss: p, q,
// g, y), and, with cert, as a DSA certificate's type.
func dssAgentKey(format string) *agent.Key {
	n := big.NewInt(7)
	blob := ssh.Marshal(struct {
		Format     string
		P, Q, G, Y *big.Int
	}{format, n, n, n, n})
	return &agent.Key{Format: format, Blob: blob, Comment: "old dsa key"}
}

// The agent's DSA keys (ssh-dss, and DSA certificates) are not offered,
// and said so with the reason a DSA key file gets, as OpenSSH 9.2 skips
// them ("Skipping ssh-dss key ... not in PubkeyAcceptedAlgorithms"):
// its default PubkeyAcceptedAlgorithms lists neither, which
// `ssh -G -F /dev/null git.example.test | grep pubkeyacceptedalgorithms`
// shows (checked below when ssh is there). The agent's other keys are
// offered. Before, the DSA keys were offered with the others.
func TestSSHAgentDSAKeyNotOffered(t *testing.T) {
	home := sshHome(t)
	keyring := agent.NewKeyring()
	_, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	if err := keyring.Add(agent.AddedKey{PrivateKey: priv}); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name  string
		ag    listingAgent
		types []string // offered
		said  string   // in skipped
	}{
		{"ed25519 and ssh-dss", listingAgent{keyring, []*agent.Key{dssAgentKey("ssh-dss")}}, []string{ssh.KeyAlgoED25519}, ": 1 DSA key (ssh-dss), which ssh 9.2 offers only when PubkeyAcceptedAlgorithms enables ssh-dss, and readproof never offers; give this source an ed25519, ecdsa or rsa key"},
		{"ssh-dss and its certificate alone", listingAgent{agent.NewKeyring(), []*agent.Key{dssAgentKey("ssh-dss"), dssAgentKey("ssh-dss-cert-v01@openssh.com")}}, nil, ": 2 DSA keys (ssh-dss), which ssh 9.2 offers only when"},
	} {
		serveListingAgent(t, c.ag)
		k, err := readSSHConfigs(filepath.Join(home, "no-system-config")).keys(t.Context(), "git.example.test", "git.example.test", "git")
		if err != nil {
			t.Fatal(err)
		}
		k.close()
		var types []string
		for _, s := range k.signers {
			types = append(types, s.PublicKey().Type())
		}
		if strings.Join(types, ",") != strings.Join(c.types, ",") {
			t.Errorf("%s: offered keys of types %q, want %q", c.name, types, c.types)
		}
		skipped := strings.Join(k.skipped, "\n")
		if !strings.Contains(skipped, c.said) || strings.Contains(skipped, "holds no key") {
			t.Errorf("%s: not offered:\n%s\nwant it to say %q", c.name, skipped, c.said)
		}
	}
	// the file's reason and the agent's are one
	if why := unusableKey("k", "ssh-dss"); !strings.HasSuffix(why, dsaRefusal) {
		t.Errorf("a DSA key file: %q, want the agent key's reason", why)
	}
	if _, err := exec.LookPath("ssh"); err == nil {
		out, err := exec.Command("ssh", "-G", "-F", os.DevNull, "git.example.test").Output()
		if err != nil {
			t.Fatalf("ssh -G: %v", err)
		}
		for _, l := range strings.Split(string(out), "\n") {
			if v, ok := strings.CutPrefix(l, "pubkeyacceptedalgorithms "); ok && strings.Contains(v, "ssh-dss") {
				t.Errorf("ssh -G lists ssh-dss among the key types it offers: the case is wrong\n%s", l)
			}
		}
	}
}
