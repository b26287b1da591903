package main

import (
	"bytes"
	"crypto/ed25519"
	"crypto/rand"
	"errors"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/rogpeppe/go-internal/testscript"
	"golang.org/x/crypto/ssh"
	"golang.org/x/crypto/ssh/knownhosts"
)

// sshServeCmd serves BASEDIR's repositories over ssh on 127.0.0.1 for the
// rest of the script, to a client holding the key of AUTHORIZED (an
// authorized_keys line), as USER when one is given (any user otherwise):
// `sshserve BASEDIR AUTHORIZED [USER]`. Each exec runs the
// real git-upload-pack (or git-receive-pack, for stock git's push) on
// BASEDIR/PATH. It sets $SSH_PORT and lists its
// host key under [127.0.0.1]:PORT in $HOME/.ssh/known_hosts.
func sshServeCmd(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) < 2 || len(args) > 3 {
		ts.Fatalf("usage: sshserve BASEDIR AUTHORIZED [USER]")
	}
	user := ""
	if len(args) == 3 {
		user = args[2]
	}
	base := ts.MkAbs(args[0])
	line, err := os.ReadFile(ts.MkAbs(args[1]))
	ts.Check(err)
	authorized, _, _, _, err := ssh.ParseAuthorizedKey(line)
	ts.Check(err)
	_, hostPriv, err := ed25519.GenerateKey(rand.Reader)
	ts.Check(err)
	hostKey, err := ssh.NewSignerFromKey(hostPriv)
	ts.Check(err)
	conf := &ssh.ServerConfig{PublicKeyCallback: func(m ssh.ConnMetadata, k ssh.PublicKey) (*ssh.Permissions, error) {
		if bytes.Equal(k.Marshal(), authorized.Marshal()) && (user == "" || m.User() == user) {
			return &ssh.Permissions{}, nil
		}
		return nil, errors.New("sshserve: key not authorised")
	}}
	conf.AddHostKey(hostKey)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	ts.Check(err)
	ts.Defer(func() { ln.Close() })
	env := scriptEnv(ts)
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go serveUploadPack(c, conf, base, env)
		}
	}()
	port := ln.Addr().(*net.TCPAddr).Port
	known := filepath.Join(ts.Getenv("HOME"), ".ssh", "known_hosts")
	f, err := os.OpenFile(known, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o600)
	ts.Check(err)
	_, err = f.WriteString(knownhosts.Line([]string{knownhosts.Normalize(net.JoinHostPort("127.0.0.1", strconv.Itoa(port)))}, hostKey.PublicKey()) + "\n")
	ts.Check(errors.Join(err, f.Close()))
	ts.Setenv("SSH_PORT", strconv.Itoa(port))
}

// serveUploadPack runs git-upload-pack for each exec request of one ssh
// connection, on base joined with the single-quoted path the client sent.
func serveUploadPack(c net.Conn, conf *ssh.ServerConfig, base string, env []string) {
	defer c.Close()
	_, chans, reqs, err := ssh.NewServerConn(c, conf)
	if err != nil {
		return
	}
	go ssh.DiscardRequests(reqs)
	for nc := range chans {
		ch, creqs, err := nc.Accept()
		if err != nil {
			return
		}
		go func() {
			defer ch.Close()
			for r := range creqs {
				if r.Type != "exec" {
					_ = r.Reply(false, nil)
					continue
				}
				var p struct{ Command string }
				_ = ssh.Unmarshal(r.Payload, &p)
				prog, path, ok := strings.Cut(p.Command, " '")
				if !ok || (prog != "git-upload-pack" && prog != "git-receive-pack") || !strings.HasSuffix(path, "'") || strings.Contains(strings.TrimSuffix(path, "'"), "'") {
					_ = r.Reply(false, nil)
					return
				}
				_ = r.Reply(true, nil)
				cmd := exec.Command(prog, filepath.Join(base, filepath.Clean("/"+strings.TrimSuffix(path, "'"))))
				cmd.Env = env
				cmd.Stdin, cmd.Stdout, cmd.Stderr = ch, ch, ch.Stderr()
				status := uint32(0)
				if err := cmd.Run(); err != nil {
					status = 1
				}
				_ = ch.CloseWrite()
				_, _ = ch.SendRequest("exit-status", false, ssh.Marshal(struct{ Status uint32 }{status}))
				return
			}
		}()
	}
}
