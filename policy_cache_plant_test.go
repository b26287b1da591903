package main

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"os"
	"regexp"
	"strconv"
	"strings"

	"github.com/rogpeppe/go-internal/testscript"
)

// plantPolicyCacheCmd is what someone who can write the store but not
// readproof.toml can do to the policy cache (docs/store-format.md, "The
// policy cache"): `plantpolicycache CACHE POLICY KEYFILE|-` takes the cache
// CACHE (one readproof wrote for another policy file of the same size),
// gives it the SHA-256 and size of POLICY, and seals it again, as the
// format says, with the key in KEYFILE (64 hex digits) or, for -, a random
// key. Only a cache sealed with the user's own key may be used.
func plantPolicyCacheCmd(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 3 {
		ts.Fatalf("usage: plantpolicycache CACHE POLICY KEYFILE|-")
	}
	cache, err := os.ReadFile(ts.MkAbs(args[0]))
	ts.Check(err)
	policy, err := os.ReadFile(ts.MkAbs(args[1]))
	ts.Check(err)
	key := make([]byte, 32)
	if args[2] == "-" {
		_, err = rand.Read(key)
		ts.Check(err)
	} else {
		text, err := os.ReadFile(ts.MkAbs(args[2]))
		ts.Check(err)
		key, err = hex.DecodeString(strings.TrimSpace(string(text)))
		ts.Check(err)
	}
	mac := strings.LastIndex(string(cache), "mac ")
	if mac < 0 {
		ts.Fatalf("%s has no mac line", args[0])
	}
	sum := sha256.Sum256(policy)
	line := regexp.MustCompile(`(?m)^policy [0-9a-f]{64} [0-9]+$`)
	body := line.ReplaceAll(cache[:mac], []byte("policy "+hex.EncodeToString(sum[:])+" "+strconv.Itoa(len(policy))))
	if string(body) == string(cache[:mac]) {
		ts.Fatalf("%s: the policy line was not changed (already %s's?)", args[0], args[1])
	}
	m := hmac.New(sha256.New, key)
	m.Write(body)
	body = append(body, "mac "+hex.EncodeToString(m.Sum(nil))+"\n"...)
	ts.Check(os.WriteFile(ts.MkAbs(args[0]), body, 0o644))
}

// policyCacheCmd is `policycache VAR STORE POLICY`: sets $VAR to the cache
// of the policy file POLICY in the store STORE, named as docs/store-format.md
// says (readproof-policy-cache- and the first 16 hex digits of the SHA-256
// of POLICY's absolute path).
func policyCacheCmd(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 3 {
		ts.Fatalf("usage: policycache VAR STORE POLICY")
	}
	sum := sha256.Sum256([]byte(ts.MkAbs(args[2])))
	ts.Setenv(args[0], ts.MkAbs(args[1])+"/readproof-policy-cache-"+hex.EncodeToString(sum[:8]))
}
