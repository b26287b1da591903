package main

// A clean-room check of the evidence format: an auditor's verifier written
// from docs/evidence.md (and the v0.3 format of ../shared/seeds/) alone. This
// file imports the standard library only, never the module's packages: what
// it recomputes (the Merkle root, the subject, each entry's digests, the
// DSSE signature) it recomputes from the published rules, and it compares
// its verdict, check by check, with what `readproof evidence verify` says of
// the same bytes. A difference is a place where the docs do not let an
// auditor compute what the code computes, or the code does something the docs
// do not say.

import (
	"bytes"
	"crypto/ed25519"
	"crypto/sha1"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// The constants of docs/evidence.md.
const (
	crStatementType = "https://in-toto.io/Statement/v1"
	crPredicateType = "urn:readproof:evidence:v0.3"
	crLeafRule      = "sha256(position_be_uint32 || 0x00 || uri || 0x00 || content_hash)"
	crPayloadType   = "application/vnd.in-toto+json"
)

var (
	crHex64       = regexp.MustCompile(`^[0-9a-f]{64}$`)
	crHex40       = regexp.MustCompile(`^[0-9a-f]{40}$`)
	crContentHash = regexp.MustCompile(`^sha256:[0-9a-f]{64}$`)
)

// crLeaf is the leaf rule: sha256(uint32_be(position) || 0x00 || uri || 0x00 || content_hash).
func crLeaf(pos uint32, uri, hash string) []byte {
	var b bytes.Buffer
	binary.Write(&b, binary.BigEndian, pos)
	b.WriteByte(0)
	b.WriteString(uri)
	b.WriteByte(0)
	b.WriteString(hash)
	s := sha256.Sum256(b.Bytes())
	return s[:]
}

// crRoot is the tree rule: none sha256(""), one the leaf, else pairs left to
// right with the last node of an odd level paired with itself.
func crRoot(level [][]byte) []byte {
	if len(level) == 0 {
		s := sha256.Sum256(nil)
		return s[:]
	}
	for len(level) > 1 {
		if len(level)%2 == 1 {
			level = append(level, level[len(level)-1])
		}
		next := make([][]byte, 0, len(level)/2)
		for i := 0; i < len(level); i += 2 {
			s := sha256.Sum256(append(append([]byte{}, level[i]...), level[i+1]...))
			next = append(next, s[:])
		}
		level = next
	}
	return level[0]
}

// crPAE is DSSE's pre-authentication encoding.
func crPAE(typ string, body []byte) []byte {
	return append([]byte(fmt.Sprintf("DSSEv1 %d %s %d ", len(typ), typ, len(body))), body...)
}

// crCheck returns the names of the failing checks of docs/evidence.md's
// "Verifying" table (the offline ones) for a bundle, and whether the
// statement was signed by trusted (nil: no key given).
func crCheck(data []byte, trusted ed25519.PublicKey) (failed []string, signed bool) {
	fail := func(name string) { failed = append(failed, name) }
	var env struct {
		Payload     *string `json:"payload"`
		PayloadType string  `json:"payloadType"`
		Signatures  []struct {
			KeyID string `json:"keyid"`
			Sig   string `json:"sig"`
		} `json:"signatures"`
	}
	if json.Unmarshal(data, &env) == nil && env.Payload != nil {
		if env.PayloadType != crPayloadType {
			fail("payload_type")
		}
		payload, err := crB64(*env.Payload)
		if err != nil {
			return append(failed, "parse"), false
		}
		for _, s := range env.Signatures {
			sig, err := crB64(s.Sig)
			if err == nil && trusted != nil && ed25519.Verify(trusted, crPAE(env.PayloadType, payload), sig) {
				signed = true
			}
		}
		if !signed {
			fail("signature")
		}
		data = payload
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var st map[string]any
	if err := dec.Decode(&st); err != nil || dec.More() {
		return append(failed, "parse"), signed
	}
	if !crIntegers(st) || crAmbiguous(data) { // docs/evidence.md: integers that fit; no ambiguous members
		return append(failed, "parse"), signed
	}
	str := func(m map[string]any, k string) string { s, _ := m[k].(string); return s }
	obj := func(m map[string]any, k string) map[string]any { o, _ := m[k].(map[string]any); return o }
	num := func(m map[string]any, k string) (int64, bool) {
		n, ok := m[k].(json.Number)
		if !ok {
			return 0, false
		}
		i, err := strconv.ParseInt(string(n), 10, 64)
		return i, err == nil
	}
	if str(st, "_type") != crStatementType {
		fail("statement_type")
	}
	if str(st, "predicateType") != crPredicateType {
		fail("predicate_type")
	}
	p := obj(st, "predicate")
	subjects, _ := st["subject"].([]any)
	digest := ""
	if len(subjects) == 1 {
		s, _ := subjects[0].(map[string]any)
		digest = str(obj(s, "digest"), "sha256")
		if str(s, "name") != str(p, "manifest_id") || !crHex64.MatchString(digest) || len(obj(s, "digest")) != 1 {
			fail("subject")
		}
	} else {
		fail("subject")
	}
	entries, _ := p["entries"].([]any)
	leaves := make([][]byte, 0, len(entries))
	leavesOK, orderOK := true, true
	for i, x := range entries {
		e, _ := x.(map[string]any)
		pos, ok := num(e, "position")
		if !ok || pos != int64(i) {
			orderOK = false
		}
		if str(e, "uri") == "" || !crContentHash.MatchString(str(e, "content_hash")) {
			orderOK = false
		}
		if !ok || pos < 0 || pos > 1<<32-1 {
			leavesOK = false
			continue
		}
		leaves = append(leaves, crLeaf(uint32(pos), str(e, "uri"), str(e, "content_hash")))
	}
	root := hex.EncodeToString(crRoot(leaves))
	if !leavesOK || root != digest {
		fail("merkle_root")
	}
	m := obj(p, "merkle")
	if !leavesOK || str(m, "algorithm") != "sha256" || str(m, "leaf") != crLeafRule || str(m, "root") != root {
		fail("predicate_merkle_root")
	}
	if !orderOK {
		fail("entry_order")
	}
	replay := obj(p, "replay")
	replayEntries, _ := replay["entries"].([]any)
	if n, ok := num(m, "leaf_count"); (m["leaf_count"] != nil && (!ok || n != int64(len(entries)))) ||
		(replay != nil && len(replayEntries) > 0 && len(replayEntries) != len(entries)) {
		fail("entry_count")
	}
	if g := obj(p, "git"); g != nil && str(g, "manifest_commit") != str(p, "manifest_id") {
		fail("git_commit")
	}
	if replay != nil {
		ok := replay["all_match"] == true && replay["error"] == nil && len(replayEntries) == len(entries)
		for i, x := range replayEntries {
			r, _ := x.(map[string]any)
			e, _ := entries[min(i, len(entries)-1)].(map[string]any)
			pos, okPos := num(r, "position")
			if !okPos || pos != int64(i) || r["match"] != true || str(r, "expected_hash") != str(e, "content_hash") ||
				str(r, "actual_hash") != str(r, "expected_hash") {
				ok = false
			}
		}
		if !ok {
			fail("recorded_replay")
		}
	}
	for i, x := range entries {
		e, _ := x.(map[string]any)
		b64, has := e["content_b64"].(string)
		if !has {
			continue
		}
		content, err := crB64(b64) // docs: standard, URL-safe or unpadded
		sum := sha256.Sum256(content)
		n, _ := num(e, "bytes")
		blob := sha1.New()
		fmt.Fprintf(blob, "blob %d\x00", len(content))
		blob.Write(content)
		snap := str(e, "snapshot_id")
		if err != nil || "sha256:"+hex.EncodeToString(sum[:]) != str(e, "content_hash") || n != int64(len(content)) ||
			(crHex40.MatchString(snap) && hex.EncodeToString(blob.Sum(nil)) != snap) {
			fail(fmt.Sprintf("content[%d]", i))
		}
	}
	slices.Sort(failed)
	return failed, signed
}

// crIntegers reports whether every number in v is an integer that fits 64 bits.
func crIntegers(v any) bool {
	switch t := v.(type) {
	case json.Number:
		_, err := strconv.ParseInt(string(t), 10, 64)
		return err == nil
	case map[string]any:
		for _, x := range t {
			if !crIntegers(x) {
				return false
			}
		}
	case []any:
		for _, x := range t {
			if !crIntegers(x) {
				return false
			}
		}
	}
	return true
}

// crFormatNames are the member names of docs/evidence.md's tables.
var crFormatNames = strings.Fields(`_type subject name digest predicateType predicate run_id manifest_id
	manifest_created_at generated_at exporter version merkle algorithm leaf root leaf_count entries position uri
	snapshot_id materialization_id content_hash source_revision observed_at content_type bytes provenance
	content_b64 ref resources namespace path source kind config policy strategy max_age_seconds missing replay
	verified_at all_match match expected_hash actual_hash error git manifest_commit tree run_ref
	manifest_sha256 commit_signer store proof_of_read receipts payload payloadType signatures keyid sig`)

// crAmbiguous reports what docs/evidence.md says verify refuses: a member
// repeated in one object, or a format member named in other case (outside
// the free-form maps: digest, provenance, config, receipts, proof_of_read).
func crAmbiguous(data []byte) bool {
	dec := json.NewDecoder(bytes.NewReader(data))
	var value func(free bool) bool
	value = func(free bool) bool {
		tok, err := dec.Token()
		if err != nil {
			return false
		}
		switch tok {
		case json.Delim('{'):
			seen := map[string]bool{}
			for dec.More() {
				k, _ := dec.Token()
				name, _ := k.(string)
				if seen[name] {
					return true
				}
				seen[name] = true
				if !free && !slices.Contains(crFormatNames, name) &&
					slices.ContainsFunc(crFormatNames, func(f string) bool { return strings.EqualFold(f, name) }) {
					return true
				}
				if value(free || slices.Contains([]string{"digest", "provenance", "config", "receipts", "proof_of_read"}, name)) {
					return true
				}
			}
			dec.Token()
		case json.Delim('['):
			for dec.More() {
				if value(free) {
					return true
				}
			}
			dec.Token()
		}
		return false
	}
	return value(false)
}

// crB64 decodes standard or URL-safe base64, padded or not.
func crB64(s string) ([]byte, error) {
	for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.RawStdEncoding, base64.URLEncoding, base64.RawURLEncoding} {
		if b, err := enc.DecodeString(s); err == nil {
			return b, nil
		}
	}
	return nil, errors.New("not base64")
}

// crPublicKey reads an OpenSSH "ssh-ed25519 AAAA… comment" public key line.
func crPublicKey(t *testing.T, line string) ed25519.PublicKey {
	t.Helper()
	f := strings.Fields(line)
	if len(f) < 2 || f[0] != "ssh-ed25519" {
		t.Fatalf("not an ssh-ed25519 public key: %q", line)
	}
	wire, err := base64.StdEncoding.DecodeString(f[1])
	if err != nil {
		t.Fatal(err)
	}
	var parts [][]byte
	for len(wire) >= 4 {
		n := binary.BigEndian.Uint32(wire)
		if int(n) > len(wire)-4 {
			break
		}
		parts, wire = append(parts, wire[4:4+n]), wire[4+n:]
	}
	if len(parts) != 2 || string(parts[0]) != "ssh-ed25519" || len(parts[1]) != ed25519.PublicKeySize {
		t.Fatalf("malformed ssh-ed25519 key %q", line)
	}
	return ed25519.PublicKey(parts[1])
}

// crVerdict is what `evidence verify --json` reports, as the auditor reads it.
type crVerdict struct {
	OK     bool
	Failed []string
	Exit   int
	Stdout string
}

func crRun(t *testing.T, dir string, env []string, args ...string) (string, string, int) {
	t.Helper()
	cmd := exec.Command("readproof", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	var exit *exec.ExitError
	switch {
	case err == nil:
		return out.String(), errb.String(), 0
	case errors.As(err, &exit):
		return out.String(), errb.String(), exit.ExitCode()
	}
	t.Fatalf("readproof %s: %v", strings.Join(args, " "), err)
	return "", "", 0
}

func crVerify(t *testing.T, dir string, env []string, file string, args ...string) crVerdict {
	t.Helper()
	out, errs, code := crRun(t, dir, env, append([]string{"evidence", "verify", "--json", file}, args...)...)
	var rep struct {
		OK     bool `json:"ok"`
		Checks []struct {
			Name string `json:"name"`
			OK   bool   `json:"ok"`
		} `json:"checks"`
	}
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("evidence verify --json %s: exit %d, stdout is not a report: %v\n%s%s", file, code, err, out, errs)
	}
	v := crVerdict{OK: rep.OK, Exit: code, Stdout: out}
	for _, c := range rep.Checks {
		if !c.OK {
			v.Failed = append(v.Failed, c.Name)
		}
	}
	slices.Sort(v.Failed)
	return v
}

// crProject is a store with one run of the given documents, exported the
// three ways an auditor receives it.
type crProject struct {
	env               []string
	root              string
	plain, full, sign string
	pub               ed25519.PublicKey
}

func newCRProject(t *testing.T, docs []string) *crProject {
	t.Helper()
	base := t.TempDir()
	dir := filepath.Join(base, "project")
	keys := filepath.Join(base, "keys")
	if err := os.MkdirAll(filepath.Join(dir, "docs"), 0o755); err != nil {
		t.Fatal(err)
	}
	env := []string{"HOME=" + base, "XDG_CONFIG_HOME=" + filepath.Join(base, "config"), "READPROOF_STORE=", "READPROOF_CONFIG=",
		"READPROOF_SIGNING_KEY=", "GIT_CONFIG_GLOBAL=" + os.DevNull, "GIT_CONFIG_NOSYSTEM=1"}
	toml := "version = 1\n"
	args := []string{"run", "--id", "run-cr"}
	for i, d := range docs {
		name := fmt.Sprintf("d%d", i)
		if err := os.WriteFile(filepath.Join(dir, "docs", name+".md"), []byte(d), 0o644); err != nil {
			t.Fatal(err)
		}
		uri := "readproof://audit/docs/" + name
		toml += fmt.Sprintf("\n[[resource]]\nuri = %q\nsource = { type = \"filesystem\", path = \"docs/%s.md\" }\n", uri, name)
		args = append(args, uri)
	}
	if err := os.WriteFile(filepath.Join(dir, "readproof.toml"), []byte(toml), 0o644); err != nil {
		t.Fatal(err)
	}
	p := &crProject{root: dir, env: env, plain: filepath.Join(base, "plain.json"), full: filepath.Join(base, "full.json"),
		sign: filepath.Join(base, "signed.dsse.json")}
	for _, a := range [][]string{{"init"}, args, {"key", "init", filepath.Join(keys, "k")},
		{"evidence", "export", "run-cr", "--out", p.plain},
		{"evidence", "export", "run-cr", "--with-content", "--out", p.full},
		{"evidence", "export", "run-cr", "--with-content", "--sign", "--key", filepath.Join(keys, "k"), "--out", p.sign}} {
		if out, errs, code := crRun(t, dir, env, a...); code != 0 {
			t.Fatalf("readproof %s: exit %d\n%s%s", strings.Join(a, " "), code, out, errs)
		}
	}
	pub, err := os.ReadFile(filepath.Join(keys, "k.pub"))
	if err != nil {
		t.Fatal(err)
	}
	p.pub = crPublicKey(t, string(pub))
	return p
}

// TestCleanRoomVectors: the published vectors (the one-entry example's root
// and evidence/testdata/merkle/*.json, written by Python) come out of this
// file's own rule.
func TestCleanRoomVectors(t *testing.T) {
	t.Parallel()
	example := crLeaf(0, "readproof://demo/policies/refunds", "sha256:c8b0bb212e93151d720746e36ff3b7076727cb577614feafa0d61f168965aedb")
	if got := hex.EncodeToString(crRoot([][]byte{example})); got != "a9b73469f1a6e956024399ac407d174cc71e5d74a66e5ce390af3d64102821be" {
		t.Errorf("the published example's root: got %s", got)
	}
	if got := string(crPAE("http://example.com/HelloWorld", []byte("hello world"))); got != "DSSEv1 29 http://example.com/HelloWorld 11 hello world" {
		t.Errorf("PAE vector: got %q", got)
	}
	files, _ := filepath.Glob("evidence/testdata/merkle/*.json")
	if len(files) < 5 {
		t.Fatalf("docs/evidence.md promises vectors for zero, one, two, three and 1,000 entries; found %v", files)
	}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var v struct {
			Entries []struct {
				Position    uint32 `json:"position"`
				URI         string `json:"uri"`
				ContentHash string `json:"content_hash"`
			} `json:"entries"`
			Leaves []string `json:"leaves"`
			Root   string   `json:"root"`
		}
		if err := json.Unmarshal(data, &v); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		var leaves [][]byte
		for i, e := range v.Entries {
			l := crLeaf(e.Position, e.URI, e.ContentHash)
			if i < len(v.Leaves) && hex.EncodeToString(l) != v.Leaves[i] {
				t.Errorf("%s: leaf %d: got %x, the vector says %s", f, i, l, v.Leaves[i])
			}
			leaves = append(leaves, l)
		}
		if got := hex.EncodeToString(crRoot(leaves)); got != v.Root {
			t.Errorf("%s: root %s, the vector says %s", f, got, v.Root)
		}
	}
}

// TestCleanRoomBundles: the three forms an auditor receives (metadata only,
// with content, signed), checked by this file's verifier and by the CLI:
// both pass them, and the signed one only with the signer's key.
func TestCleanRoomBundles(t *testing.T) {
	t.Parallel()
	p := newCRProject(t, []string{"Products can be refunded within 30 days.\n", "Returns are accepted within 60 days.\n", "Shipping is free above 50 EUR.\n"})
	for _, f := range []string{p.plain, p.full} {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if failed, signed := crCheck(data, p.pub); len(failed) != 0 || signed {
			t.Errorf("%s: the clean-room checker fails %v (signed %v)", filepath.Base(f), failed, signed)
		}
		if v := crVerify(t, p.root, p.env, f, "--offline"); !v.OK || v.Exit != 0 {
			t.Errorf("%s: evidence verify --offline: %+v", filepath.Base(f), v)
		}
		if v := crVerify(t, p.root, p.env, f); !v.OK || v.Exit != 0 {
			t.Errorf("%s: evidence verify: %+v", filepath.Base(f), v)
		}
	}
	data, err := os.ReadFile(p.sign)
	if err != nil {
		t.Fatal(err)
	}
	if failed, signed := crCheck(data, p.pub); len(failed) != 0 || !signed {
		t.Errorf("signed bundle: the clean-room checker fails %v (signed %v)", failed, signed)
	}
	if failed, _ := crCheck(data, nil); !slices.Equal(failed, []string{"signature"}) {
		t.Errorf("signed bundle without a key: the clean-room checker fails %v, want [signature]", failed)
	}
	// the signed statement is the unsigned export byte for byte, apart from
	// the two times the docs name
	var env struct{ Payload string }
	if err := json.Unmarshal(data, &env); err != nil {
		t.Fatal(err)
	}
	payload, _ := base64.StdEncoding.DecodeString(env.Payload)
	full, _ := os.ReadFile(p.full)
	times := regexp.MustCompile(`"(generated_at|verified_at)": "[^"]*"`)
	if !bytes.Equal(times.ReplaceAll(payload, nil), times.ReplaceAll(full, nil)) {
		t.Errorf("the signed payload differs from the unsigned export beyond generated_at and verified_at")
	}
	allowed := filepath.Join(t.TempDir(), "allowed_signers")
	line, _, code := crRun(t, p.root, p.env, "key", "show", "--key", filepath.Join(filepath.Dir(p.plain), "keys", "k"), "--format", "allowed-signers")
	if code != 0 || os.WriteFile(allowed, []byte(line), 0o644) != nil {
		t.Fatalf("key show: exit %d", code)
	}
	if v := crVerify(t, p.root, p.env, p.sign, "--offline", "--trusted-keys", allowed); !v.OK {
		t.Errorf("signed bundle, trusted key: evidence verify: %+v", v)
	}
	// what the auditor reads: signed only when a trusted key verified it
	for _, c := range []struct {
		file   string
		signed bool
	}{{p.sign, true}, {p.full, false}, {p.plain, false}} {
		out, _, code := crRun(t, p.root, p.env, "evidence", "verify", c.file, "--offline", "--trusted-keys", allowed)
		if code != 0 || strings.Contains(out, "signed by") != c.signed {
			t.Errorf("%s with a trusted key: exit %d, says %q; signed: %v", filepath.Base(c.file), code, out, c.signed)
		}
	}
	if v := crVerify(t, p.root, p.env, p.sign, "--offline"); v.OK || v.Exit != 3 || !slices.Equal(v.Failed, []string{"signature"}) {
		t.Errorf("signed bundle, no key: evidence verify: ok %v exit %d failed %v, want exit 3 failing [signature]", v.OK, v.Exit, v.Failed)
	}
}

// crNode is a JSON value that keeps its members in the order of the file, so
// that an edited bundle differs from the exported one in the edit alone.
type crNode struct {
	keys []string
	vals []*crNode // members of an object, elements of an array
	arr  bool
	leaf any // string, json.Number, bool or nil, when neither
}

func crParse(t *testing.T, data []byte) *crNode {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var value func() *crNode
	value = func() *crNode {
		tok, err := dec.Token()
		if err != nil {
			t.Fatal(err)
		}
		switch tok {
		case json.Delim('{'):
			n := &crNode{}
			for dec.More() {
				k, err := dec.Token()
				if err != nil {
					t.Fatal(err)
				}
				n.keys = append(n.keys, k.(string))
				n.vals = append(n.vals, value())
			}
			dec.Token()
			return n
		case json.Delim('['):
			n := &crNode{arr: true}
			for dec.More() {
				n.vals = append(n.vals, value())
			}
			dec.Token()
			return n
		}
		return &crNode{leaf: tok}
	}
	return value()
}

func (n *crNode) clone() *crNode {
	c := &crNode{keys: slices.Clone(n.keys), arr: n.arr, leaf: n.leaf}
	for _, v := range n.vals {
		c.vals = append(c.vals, v.clone())
	}
	return c
}

// encode writes n as export does: indented by two spaces, <, > and & not
// escaped, a newline at the end.
func (n *crNode) encode() []byte {
	var b bytes.Buffer
	var write func(n *crNode, indent string)
	str := func(s string) {
		var e bytes.Buffer
		enc := json.NewEncoder(&e)
		enc.SetEscapeHTML(false)
		enc.Encode(s)
		b.Write(bytes.TrimSuffix(e.Bytes(), []byte("\n")))
	}
	write = func(n *crNode, indent string) {
		switch {
		case n.arr || n.keys != nil || (n.leaf == nil && n.vals != nil):
			open, closer := "{", "}"
			if n.arr {
				open, closer = "[", "]"
			}
			if len(n.vals) == 0 {
				b.WriteString(open + closer)
				return
			}
			b.WriteString(open + "\n")
			for i, v := range n.vals {
				b.WriteString(indent + "  ")
				if !n.arr {
					str(n.keys[i])
					b.WriteString(": ")
				}
				write(v, indent+"  ")
				if i < len(n.vals)-1 {
					b.WriteString(",")
				}
				b.WriteString("\n")
			}
			b.WriteString(indent + closer)
		default:
			switch l := n.leaf.(type) {
			case string:
				str(l)
			case json.Number:
				b.WriteString(string(l))
			case bool:
				b.WriteString(strconv.FormatBool(l))
			default:
				b.WriteString("null")
			}
		}
	}
	write(n, "")
	b.WriteString("\n")
	return b.Bytes()
}

// leaves lists the path of every scalar below n.
func (n *crNode) leaves(path string, out *[]string) {
	if !n.arr && n.keys == nil {
		if n.vals == nil {
			*out = append(*out, path)
			return
		}
	}
	for i, v := range n.vals {
		k := strconv.Itoa(i)
		if !n.arr {
			k = n.keys[i]
		}
		v.leaves(strings.TrimPrefix(path+"."+k, "."), out)
	}
}

func (n *crNode) at(path string) *crNode {
	for _, k := range strings.Split(path, ".") {
		i := slices.Index(n.keys, k)
		if n.arr {
			i, _ = strconv.Atoi(k)
		}
		n = n.vals[i]
	}
	return n
}

// crMutate changes a scalar the smallest way that changes its value.
func crMutate(l any) any {
	switch v := l.(type) {
	case bool:
		return !v
	case json.Number:
		i, _ := strconv.ParseInt(string(v), 10, 64)
		return json.Number(strconv.FormatInt(i+1, 10))
	case string:
		if v == "" {
			return "x"
		}
		if b, err := base64.StdEncoding.DecodeString(v); err == nil && len(v) >= 8 && strings.HasSuffix(v, "=") {
			b[0] ^= 1 // content bytes, still base64
			return base64.StdEncoding.EncodeToString(b)
		}
		last := v[len(v)-1]
		if last == '0' {
			return v[:len(v)-1] + "1"
		}
		return v[:len(v)-1] + "0"
	}
	return "x"
}

// crUncovered: the fields docs/evidence.md says no check covers, offline or
// against the store.
func crUncovered(path string) bool {
	for _, p := range []string{"predicate.generated_at", "predicate.exporter.", "predicate.replay.verified_at", "predicate.git.store", "predicate.resources."} {
		if path == p || strings.HasPrefix(path, p) {
			return true
		}
	}
	return false
}

// TestCleanRoomTampering changes every authenticated element of a small
// bundle in turn, and the file's form, and checks that `evidence verify`
// agrees with the clean-room checker offline (the same checks fail, exit 3,
// each failing line with a reason), and that against the store every edited
// field fails some check unless the docs say no check covers it.
func TestCleanRoomTampering(t *testing.T) {
	t.Parallel()
	docs := []string{"Products can be refunded within 30 days.\n", "Returns are accepted within 60 days.\n"}
	long := os.Getenv("READPROOF_LONG_TESTS") != ""
	if long {
		docs = append(docs, "Shipping is free above 50 EUR.\n")
	}
	p := newCRProject(t, docs)
	// By default the bundle with content (a superset of the fields of the
	// plain one) and the edits of entry 0; all of both with the long tests.
	sources := []string{p.full}
	if long {
		sources = []string{p.plain, p.full}
	}
	dir := t.TempDir()
	try := func(name string, data []byte, store bool) (clean []string, cli crVerdict) {
		t.Helper()
		f := filepath.Join(dir, "t.json")
		if err := os.WriteFile(f, data, 0o644); err != nil {
			t.Fatal(err)
		}
		clean, _ = crCheck(data, nil)
		if store {
			cli = crVerify(t, p.root, p.env, f)
		} else {
			cli = crVerify(t, p.root, p.env, f, "--offline")
		}
		if !cli.OK && cli.Exit != 3 {
			t.Errorf("%s: evidence verify failed with exit %d, docs: 3", name, cli.Exit)
		}
		if cli.OK == (cli.Exit != 0) {
			t.Errorf("%s: evidence verify says ok %v and exits %d", name, cli.OK, cli.Exit)
		}
		return clean, cli
	}
	for _, src := range sources {
		orig, err := os.ReadFile(src)
		if err != nil {
			t.Fatal(err)
		}
		root := crParse(t, orig)
		if !bytes.Equal(root.encode(), orig) {
			t.Fatalf("%s: the clean-room encoder does not reproduce the export's bytes (docs/evidence.md, The shape)", src)
		}
		var paths []string
		root.leaves("", &paths)
		for _, path := range paths {
			if !long && strings.Contains(path, ".1.") {
				continue // entry 1 is entry 0's twin
			}
			edited := root.clone()
			n := edited.at(path)
			n.leaf = crMutate(n.leaf)
			name := fmt.Sprintf("%s: %s %v -> %v", filepath.Base(src), path, root.at(path).leaf, n.leaf)
			data := edited.encode()
			clean, cli := try(name, data, false)
			if !slices.Equal(clean, cli.Failed) {
				t.Errorf("%s: offline, the clean-room checker fails %v, evidence verify fails %v", name, clean, cli.Failed)
			}
			if !cli.OK {
				continue
			}
			if _, cli := try(name, data, true); cli.OK != crUncovered(path) {
				t.Errorf("%s: against the store evidence verify says ok %v; docs/evidence.md: covered %v", name, cli.OK, !crUncovered(path))
			}
		}
	}

	// the file's form and the entry list
	orig, _ := os.ReadFile(p.full)
	root := crParse(t, orig)
	entries := root.at("predicate.entries")
	var compact bytes.Buffer
	json.Compact(&compact, orig)
	reordered := root.clone()
	pr := reordered.at("predicate")
	slices.Reverse(pr.keys)
	slices.Reverse(pr.vals)
	for _, c := range []struct {
		name string
		edit func() []byte
		ok   bool // the docs say verify does not care
	}{
		{"entries swapped", func() []byte {
			e := root.clone()
			es := e.at("predicate.entries")
			es.vals[0], es.vals[1] = es.vals[1], es.vals[0]
			return e.encode()
		}, false},
		{"last entry dropped", func() []byte {
			e := root.clone()
			es := e.at("predicate.entries")
			es.vals = es.vals[:len(es.vals)-1]
			return e.encode()
		}, false},
		{"last entry duplicated", func() []byte {
			e := root.clone()
			es := e.at("predicate.entries")
			es.vals = append(es.vals, es.vals[len(es.vals)-1].clone())
			return e.encode()
		}, false},
		{"a second JSON document appended", func() []byte { return append(slices.Clone(orig), orig...) }, false},
		{"a byte order mark", func() []byte { return append([]byte("\xef\xbb\xbf"), orig...) }, false},
		{"a huge leaf_count", func() []byte {
			return bytes.Replace(orig, []byte(fmt.Sprintf(`"leaf_count": %d`, len(entries.vals))), []byte(`"leaf_count": 100000000000000000000000000000`), 1)
		}, false},
		{"a position past uint32", func() []byte {
			return bytes.Replace(orig, []byte(`"position": 0`), []byte(`"position": 4294967296`), 1)
		}, false},
		{"a member repeated", func() []byte {
			return bytes.Replace(orig, []byte(`"uri": "`), []byte(`"uri": "readproof://audit/docs/other", "uri": "`), 1)
		}, false},
		{"a member named in other case", func() []byte {
			return bytes.Replace(orig, []byte(`"content_type": "`), []byte(`"Content_Type": "`), 1)
		}, false},
		{"content_b64 unpadded and URL-safe", func() []byte {
			e := root.clone()
			for _, en := range e.at("predicate.entries").vals {
				n := en.at("content_b64")
				b, _ := base64.StdEncoding.DecodeString(n.leaf.(string))
				n.leaf = base64.RawURLEncoding.EncodeToString(append(b, 0xfb, 0xff))
				en.at("bytes").leaf = json.Number(strconv.Itoa(len(b) + 2))
			}
			return e.encode()
		}, false}, // other bytes: the hash fails, whatever the spelling
		{"content_b64 unpadded", func() []byte {
			e := root.clone()
			for _, en := range e.at("predicate.entries").vals {
				n := en.at("content_b64")
				n.leaf = strings.TrimRight(n.leaf.(string), "=")
			}
			return e.encode()
		}, true},
		{"compact whitespace", func() []byte { return compact.Bytes() }, true},
		{"the predicate's members in reverse order", reordered.encode, true},
	} {
		data := c.edit()
		clean, cli := try(c.name, data, false)
		if cli.OK != c.ok || !slices.Equal(clean, cli.Failed) {
			t.Errorf("%s: evidence verify --offline ok %v failing %v; the clean-room checker fails %v; want ok %v", c.name, cli.OK, cli.Failed, clean, c.ok)
		}
	}

	// the envelope
	signed, _ := os.ReadFile(p.sign)
	var env map[string]any
	if err := json.Unmarshal(signed, &env); err != nil {
		t.Fatal(err)
	}
	allowed := filepath.Join(dir, "allowed_signers")
	line, _, _ := crRun(t, p.root, p.env, "key", "show", "--key", filepath.Join(filepath.Dir(p.plain), "keys", "k"), "--format", "allowed-signers")
	if err := os.WriteFile(allowed, []byte(line), 0o644); err != nil {
		t.Fatal(err)
	}
	sig := func(e map[string]any) map[string]any { return e["signatures"].([]any)[0].(map[string]any) }
	flip := func(s string) string {
		b, _ := base64.StdEncoding.DecodeString(s)
		b[len(b)/2] ^= 1
		return base64.StdEncoding.EncodeToString(b)
	}
	for _, c := range []struct {
		name string
		edit func(e map[string]any)
		ok   bool
	}{
		{"as exported", func(map[string]any) {}, true},
		{"a payload byte", func(e map[string]any) { e["payload"] = flip(e["payload"].(string)) }, false},
		{"payloadType", func(e map[string]any) { e["payloadType"] = "application/json" }, false},
		{"signature bytes", func(e map[string]any) { sig(e)["sig"] = flip(sig(e)["sig"].(string)) }, false},
		{"no signature", func(e map[string]any) { e["signatures"] = []any{} }, false},
		{"keyid (a hint, not trusted)", func(e map[string]any) { sig(e)["keyid"] = "SHA256:someone-else" }, true},
	} {
		e := map[string]any{}
		json.Unmarshal(signed, &e)
		c.edit(e)
		data, _ := json.Marshal(e)
		f := filepath.Join(dir, "t.dsse.json")
		if err := os.WriteFile(f, data, 0o644); err != nil {
			t.Fatal(err)
		}
		clean, signedOK := crCheck(data, p.pub)
		cli := crVerify(t, p.root, p.env, f, "--offline", "--trusted-keys", allowed)
		if cli.OK != c.ok || (len(clean) == 0) != c.ok || !slices.Equal(clean, cli.Failed) || (!c.ok && cli.Exit != 3) {
			t.Errorf("envelope, %s: evidence verify ok %v exit %d failing %v; the clean-room checker fails %v (signed %v); want ok %v",
				c.name, cli.OK, cli.Exit, cli.Failed, clean, signedOK, c.ok)
		}
	}
}

// TestCleanRoomDocExample: the bundle docs/evidence.md shows under "The
// shape" ("the root, hashes and content are the real ones") passes the
// clean-room checker and `evidence verify --offline`, with the published
// root, and lists its members in the order the real export writes them.
func TestCleanRoomDocExample(t *testing.T) {
	t.Parallel()
	doc, err := os.ReadFile("docs/evidence.md")
	if err != nil {
		t.Fatal(err)
	}
	_, after, _ := bytes.Cut(doc, []byte("\n## The shape\n"))
	_, block, ok := bytes.Cut(after, []byte("```json\n"))
	block, _, ok2 := bytes.Cut(block, []byte("```\n"))
	if !ok || !ok2 {
		t.Fatal("docs/evidence.md: no json block under ## The shape")
	}
	if failed, _ := crCheck(block, nil); len(failed) != 0 {
		t.Errorf("the documented example fails the clean-room checks %v", failed)
	}
	if !bytes.Contains(block, []byte(`"sha256": "a9b73469f1a6e956024399ac407d174cc71e5d74a66e5ce390af3d64102821be"`)) {
		t.Errorf("the documented example does not carry the published root")
	}
	dir := t.TempDir()
	f := filepath.Join(dir, "example.json")
	if err := os.WriteFile(f, block, 0o644); err != nil {
		t.Fatal(err)
	}
	env := []string{"HOME=" + dir, "XDG_CONFIG_HOME=" + dir, "READPROOF_STORE=", "READPROOF_CONFIG="}
	if v := crVerify(t, dir, env, f, "--offline"); !v.OK {
		t.Errorf("evidence verify --offline of the documented example: failing %v\n%s", v.Failed, v.Stdout)
	}
	// member order: each object of the example lists its members in the
	// order a real export does (members only one of them has aside)
	p := newCRProject(t, []string{"Products can be refunded within 30 days.\n"})
	real, err := os.ReadFile(p.full)
	if err != nil {
		t.Fatal(err)
	}
	var compare func(path string, a, b *crNode)
	compare = func(path string, a, b *crNode) {
		if a.arr && b.arr && len(a.vals) > 0 && len(b.vals) > 0 {
			compare(path+"[0]", a.vals[0], b.vals[0])
			return
		}
		var ka, kb []string
		for _, k := range a.keys {
			if slices.Contains(b.keys, k) {
				ka = append(ka, k)
			}
		}
		for _, k := range b.keys {
			if slices.Contains(a.keys, k) {
				kb = append(kb, k)
			}
		}
		if !slices.Equal(ka, kb) {
			t.Errorf("%s: the docs list members %v, the export %v", path, ka, kb)
		}
		for i, k := range a.keys {
			if j := slices.Index(b.keys, k); j >= 0 && k != "config" {
				compare(path+"."+k, a.vals[i], b.vals[j])
			}
		}
	}
	compare("", crParse(t, block), crParse(t, real))
}
