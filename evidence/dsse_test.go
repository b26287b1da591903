package evidence

import (
	"bytes"
	"context"
	"crypto"
	"crypto/ed25519"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/secure-systems-lab/go-securesystemslib/dsse"
)

func TestPAESpecVector(t *testing.T) {
	t.Parallel()
	const want = "DSSEv1 29 http://example.com/HelloWorld 11 hello world"
	if got := string(PAE("http://example.com/HelloWorld", []byte("hello world"))); got != want {
		t.Fatalf("PAE = %q, want %q", got, want)
	}
	if got := string(PAE("", nil)); got != "DSSEv1 0  0 " {
		t.Fatalf("empty PAE = %q", got)
	}
	if !bytes.Equal(PAE(PayloadType, []byte("ü")), dsse.PAE(PayloadType, []byte("ü"))) {
		t.Fatal("PAE disagrees with the reference library on multi-byte input")
	}
}

func TestSignEnvelopeShape(t *testing.T) {
	t.Parallel()
	k := testKey(t, 1)
	payload := []byte(`{"_type":"x"}` + "\n")
	env, err := k.SignEnvelope(payload)
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(keyOrder(t, env), " "); got != "payload payloadType signatures" {
		t.Fatalf("envelope keys %q", got)
	}
	if got := strings.Join(keyOrder(t, env, "signatures", "0"), " "); got != "keyid sig" {
		t.Fatalf("signature keys %q", got)
	}
	var e Envelope
	if err := json.Unmarshal(env, &e); err != nil {
		t.Fatal(err)
	}
	raw, _ := base64.StdEncoding.DecodeString(e.Payload)
	if !bytes.Equal(raw, payload) || e.PayloadType != "application/vnd.in-toto+json" || e.Signatures[0].KeyID != k.Fingerprint() || !strings.HasPrefix(k.Fingerprint(), "SHA256:") {
		t.Fatalf("envelope %+v", e)
	}
	sig, _ := base64.StdEncoding.DecodeString(e.Signatures[0].Sig)
	if !ed25519.Verify(k.Public, PAE(PayloadType, payload), sig) {
		t.Fatal("signature is not over PAE(payloadType, payload)")
	}
	if _, err := Sign(payload, ed25519.PrivateKey{1, 2}); !errors.Is(err, ErrUnsupportedKey) {
		t.Fatalf("short key: %v", err)
	}
}

// oracle adapts an ed25519 key to the reference DSSE library.
type oracle struct {
	priv ed25519.PrivateKey
	pub  ed25519.PublicKey
}

func (o oracle) Sign(_ context.Context, data []byte) ([]byte, error) {
	return ed25519.Sign(o.priv, data), nil
}
func (o oracle) Verify(_ context.Context, data, sig []byte) error {
	if !ed25519.Verify(o.pub, data, sig) {
		return errors.New("bad signature")
	}
	return nil
}
func (o oracle) KeyID() (string, error)   { return dsse.SHA256KeyID(o.pub) }
func (o oracle) Public() crypto.PublicKey { return o.pub }

func TestDSSECrossVerify(t *testing.T) {
	t.Parallel()
	k := testKey(t, 3)
	o := oracle{priv: k.PrivateKey(), pub: k.Public}
	in, _ := threeInput(t)
	payload := mustBundle(t, in)

	// Ours -> reference verifier.
	ours, err := Sign(payload, k.PrivateKey())
	if err != nil {
		t.Fatal(err)
	}
	var env dsse.Envelope
	if err := json.Unmarshal(ours, &env); err != nil {
		t.Fatal(err)
	}
	ev, err := dsse.NewEnvelopeVerifier(o)
	if err != nil {
		t.Fatal(err)
	}
	accepted, body, err := ev.VerifyAndDecode(context.Background(), &env)
	if err != nil || len(accepted) != 1 || !bytes.Equal(body, payload) {
		t.Fatalf("reference library rejects our envelope: %v", err)
	}
	if accepted[0].KeyID != k.Fingerprint() {
		t.Fatalf("keyid %q, reference computes %q", k.Fingerprint(), accepted[0].KeyID)
	}

	// Reference signer -> ours.
	es, err := dsse.NewEnvelopeSigner(o)
	if err != nil {
		t.Fatal(err)
	}
	theirs, err := es.SignPayload(context.Background(), PayloadType, payload)
	if err != nil {
		t.Fatal(err)
	}
	data, _ := json.Marshal(theirs)
	r, err := Verify(data, VerifyOptions{Offline: true, TrustedKeys: []ed25519.PublicKey{k.Public}})
	if err != nil {
		t.Fatal(err)
	}
	wantFailed(t, r)
	if r.Signer != k.Fingerprint() || !bytes.Equal(r.Payload, payload) {
		t.Fatalf("signer %q", r.Signer)
	}

	// A tampered envelope is rejected by both.
	theirs.Payload = base64.StdEncoding.EncodeToString(append(payload[:len(payload):len(payload)], ' '))
	if _, err := ev.Verify(context.Background(), theirs); err == nil {
		t.Fatal("reference library accepted a changed payload")
	}
	data, _ = json.Marshal(theirs)
	r, _ = Verify(data, VerifyOptions{Offline: true, TrustedKeys: []ed25519.PublicKey{k.Public}})
	wantFailed(t, r, "signature")
}

func TestVerifyEnvelopeTamper(t *testing.T) {
	t.Parallel()
	k := testKey(t, 1)
	trusted := []ed25519.PublicKey{k.Public}
	in, store := threeInput(t)
	payload := mustBundle(t, in)
	signed, err := Sign(payload, k.PrivateKey())
	if err != nil {
		t.Fatal(err)
	}
	edit := func(fn func(e *Envelope)) []byte {
		var e Envelope
		if err := json.Unmarshal(signed, &e); err != nil {
			t.Fatal(err)
		}
		fn(&e)
		out, _ := json.Marshal(e)
		return out
	}
	for _, tc := range []struct {
		name string
		data []byte
		keys []ed25519.PublicKey
		want []string
	}{
		{"genuine", signed, trusted, nil},
		{"url-safe base64, no padding", edit(func(e *Envelope) {
			p, _ := base64.StdEncoding.DecodeString(e.Payload)
			s, _ := base64.StdEncoding.DecodeString(e.Signatures[0].Sig)
			e.Payload, e.Signatures[0].Sig = base64.RawURLEncoding.EncodeToString(p), base64.RawURLEncoding.EncodeToString(s)
		}), trusted, nil},
		{"wrong keyid is only a hint", edit(func(e *Envelope) { e.Signatures[0].KeyID = "SHA256:nobody" }), trusted, nil},
		{"flipped payload byte", edit(func(e *Envelope) {
			p, _ := base64.StdEncoding.DecodeString(e.Payload)
			i := bytes.Index(p, []byte(`"generated_at": "2026`)) + len(`"generated_at": "202`)
			p[i] ^= 0x01 // 2026 -> 2027: still a valid statement
			e.Payload = base64.StdEncoding.EncodeToString(p)
		}), trusted, []string{"signature"}},
		{"wrong key", signed, []ed25519.PublicKey{testKey(t, 9).Public}, []string{"signature"}},
		{"no trusted key", signed, nil, []string{"signature"}},
		{"changed payloadType", edit(func(e *Envelope) { e.PayloadType = "application/json" }), trusted, []string{"payload_type", "signature"}},
		{"no signatures", edit(func(e *Envelope) { e.Signatures = nil }), trusted, []string{"signature"}},
		{"garbage signature", edit(func(e *Envelope) { e.Signatures[0].Sig = "!!" }), trusted, []string{"signature"}},
		{"second signature verifies", edit(func(e *Envelope) {
			e.Signatures = append([]EnvelopeSignature{{KeyID: "x", Sig: base64.StdEncoding.EncodeToString(make([]byte, 64))}}, e.Signatures...)
		}), trusted, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r, err := Verify(tc.data, VerifyOptions{Store: store, TrustedKeys: tc.keys})
			if err != nil {
				t.Fatal(err)
			}
			wantFailed(t, r, tc.want...)
			if !r.Signed {
				t.Fatal("envelope not reported as signed")
			}
		})
	}
	// A malformed envelope is one failing check.
	r, _ := Verify([]byte(`{"payload":"%%%","payloadType":"x","signatures":[]}`), VerifyOptions{Offline: true, TrustedKeys: trusted})
	wantFailed(t, r, "signature")
	// RequireSignature fails a plain statement.
	r, _ = Verify(payload, VerifyOptions{Store: store, RequireSignature: true})
	wantFailed(t, r, "signature")
	// A statement's members beside the envelope's: `jq .predicate` on the
	// file would show them, the signature covers only the payload.
	var stmt map[string]any
	if err := json.Unmarshal(payload, &stmt); err != nil {
		t.Fatal(err)
	}
	for _, member := range []string{"subject", "predicate"} {
		var env map[string]any
		if err := json.Unmarshal(signed, &env); err != nil {
			t.Fatal(err)
		}
		env[member] = stmt[member]
		data, _ := json.Marshal(env)
		r, _ = Verify(data, VerifyOptions{Offline: true, TrustedKeys: trusted})
		wantFailed(t, r, "parse")
	}
}

func TestOpenEnvelope(t *testing.T) {
	t.Parallel()
	k := testKey(t, 4)
	env, _ := Sign([]byte("hello"), k.PrivateKey())
	o, err := OpenEnvelope(env, []ed25519.PublicKey{k.Public})
	if err != nil || o.SigErr != nil || string(o.Payload) != "hello" || o.Signer != k.Fingerprint() {
		t.Fatalf("open: %+v %v", o, err)
	}
	o, err = OpenEnvelope(env, []ed25519.PublicKey{testKey(t, 5).Public})
	if err != nil || !errors.Is(o.SigErr, ErrBadSignature) {
		t.Fatalf("wrong key: %+v %v", o, err)
	}
	o, _ = OpenEnvelope(env, nil)
	if !errors.Is(o.SigErr, ErrUntrustedKey) {
		t.Fatalf("no keys: %v", o.SigErr)
	}
	if _, err := OpenEnvelope([]byte(`{"payload":"aGk="}`), nil); !errors.Is(err, ErrEnvelope) {
		t.Fatalf("missing payloadType: %v", err)
	}
}

// TestDSSEWithOpenSSL checks our signatures with a stock tool, and a stock
// tool's signature with our verifier.
func TestDSSEWithOpenSSL(t *testing.T) {
	t.Parallel()
	openssl, err := exec.LookPath("openssl")
	if err != nil {
		t.Skip("openssl not installed")
	}
	dir := t.TempDir()
	k := testKey(t, 6)
	in, _ := threeInput(t)
	payload := mustBundle(t, in)
	env, _ := Sign(payload, k.PrivateKey())
	var e Envelope
	json.Unmarshal(env, &e)
	sig, _ := base64.StdEncoding.DecodeString(e.Signatures[0].Sig)
	write := func(name string, data []byte) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, data, 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	pub := write("key.pub.pem", k.PublicPEM())
	pae := write("pae", PAE(e.PayloadType, payload))
	sigf := write("sig", sig)
	out, err := exec.Command(openssl, "pkeyutl", "-verify", "-pubin", "-inkey", pub, "-rawin", "-in", pae, "-sigfile", sigf).CombinedOutput()
	if err != nil || !strings.Contains(string(out), "Signature Verified Successfully") {
		t.Fatalf("openssl rejects our signature: %v\n%s", err, out)
	}
	bad := write("pae-bad", PAE("application/json", payload))
	if out, err := exec.Command(openssl, "pkeyutl", "-verify", "-pubin", "-inkey", pub, "-rawin", "-in", bad, "-sigfile", sigf).CombinedOutput(); err == nil {
		t.Fatalf("openssl accepted a signature over another payloadType:\n%s", out)
	}

	// openssl signs, we verify.
	priv := write("key.pem", pkcs8PEM(t, k))
	out, err = exec.Command(openssl, "pkeyutl", "-sign", "-inkey", priv, "-rawin", "-in", pae, "-out", filepath.Join(dir, "sig2")).CombinedOutput()
	if err != nil {
		t.Fatalf("openssl sign: %v\n%s", err, out)
	}
	sig2, _ := os.ReadFile(filepath.Join(dir, "sig2"))
	e.Signatures = []EnvelopeSignature{{Sig: base64.StdEncoding.EncodeToString(sig2)}}
	data, _ := json.Marshal(e)
	r, _ := Verify(data, VerifyOptions{Offline: true, TrustedKeys: []ed25519.PublicKey{k.Public}})
	wantFailed(t, r)
}

// TestAuditorScript runs the shell steps docs/evidence.md gives auditors
// (kept in testdata/dsse-verify.sh and quoted verbatim in the doc).
func TestAuditorScript(t *testing.T) {
	t.Parallel()
	for _, tool := range []string{"sh", "openssl", "jq", "base64", "wc"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s not installed", tool)
		}
	}
	script, err := filepath.Abs("testdata/dsse-verify.sh")
	if err != nil {
		t.Fatal(err)
	}
	body, err := os.ReadFile(script)
	if err != nil {
		t.Fatal(err)
	}
	checkQuotedInDocs(t, "testdata/dsse-verify.sh", body)
	dir := t.TempDir()
	k := testKey(t, 7)
	in, _ := threeInput(t)
	env, _ := Sign(mustBundle(t, in), k.PrivateKey())
	os.WriteFile(filepath.Join(dir, "bundle.dsse.json"), env, 0o644)
	os.WriteFile(filepath.Join(dir, "key.pub.pem"), k.PublicPEM(), 0o644)
	run := func() (string, error) {
		cmd := exec.Command("sh", script)
		cmd.Dir = dir
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
	if out, err := run(); err != nil || !strings.Contains(out, "Signature Verified Successfully") {
		t.Fatalf("auditor script rejects a good bundle: %v\n%s", err, out)
	}
	// The script also leaves the verified payload behind for inspection.
	if got, _ := os.ReadFile(filepath.Join(dir, "payload.json")); !bytes.Equal(got, mustBundle(t, in)) {
		t.Fatal("payload.json is not the signed statement")
	}
	os.WriteFile(filepath.Join(dir, "key.pub.pem"), testKey(t, 8).PublicPEM(), 0o644)
	if out, err := run(); err == nil {
		t.Fatalf("auditor script accepts another key:\n%s", out)
	}
}

// stripComments drops leading comment lines and the shebang of a script.
func stripComments(b []byte) []byte {
	lines := strings.Split(string(b), "\n")
	i := 0
	for i < len(lines) && strings.HasPrefix(lines[i], "#") {
		i++
	}
	return []byte(strings.Join(lines[i:], "\n"))
}

// checkQuotedInDocs asserts that docs/evidence.md carries a script's body
// verbatim, so the documented steps are the tested ones.
func checkQuotedInDocs(t *testing.T, name string, script []byte) {
	t.Helper()
	doc, err := os.ReadFile("../docs/evidence.md")
	if err != nil {
		t.Fatalf("docs/evidence.md: %v", err)
	}
	if !bytes.Contains(doc, stripComments(script)) {
		t.Errorf("docs/evidence.md does not quote %s verbatim", name)
	}
}

// TestAuditorMerkleScript runs the documented shell recomputation of the
// Merkle root (testdata/merkle-root.sh) on a vector and on a bundle.
func TestAuditorMerkleScript(t *testing.T) {
	t.Parallel()
	for _, tool := range []string{"sh", "jq", "xxd", "sha256sum", "mktemp"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s not installed", tool)
		}
	}
	script, _ := filepath.Abs("testdata/merkle-root.sh")
	body, err := os.ReadFile(script)
	if err != nil {
		t.Fatal(err)
	}
	checkQuotedInDocs(t, "testdata/merkle-root.sh", body)
	dir := t.TempDir()
	root := func(bundle []byte) string {
		p := filepath.Join(dir, "bundle.json")
		os.WriteFile(p, bundle, 0o644)
		out, err := exec.Command("sh", script, p).CombinedOutput()
		if err != nil {
			t.Fatalf("merkle-root.sh: %v\n%s", err, out)
		}
		return strings.TrimSpace(string(out))
	}
	v := loadVector(t, "three")
	vec, _ := json.Marshal(map[string]any{"predicate": map[string]any{"entries": v.Entries}})
	if got := root(vec); got != v.Root {
		t.Fatalf("script root %s, vector %s", got, v.Root)
	}
	in, _ := threeInput(t)
	in.Entries = append(in.Entries, mkEntry(3, "readproof://demo/d", "d\n"), mkEntry(4, "readproof://demo/e", "e\n"))
	in.Replay = nil
	st, err := Build(in)
	if err != nil {
		t.Fatal(err)
	}
	data, _ := Marshal(st)
	if got := root(data); got != st.Subject[0].Digest["sha256"] {
		t.Fatalf("script root %s, bundle %s", got, st.Subject[0].Digest["sha256"])
	}
	if got := root([]byte(`{"predicate":{"entries":[]}}`)); got != "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855" {
		t.Fatalf("empty root %s", got)
	}
	// jq hands the entries to the shell as tab-separated lines. Before
	// session 29 (evaudit) a uri holding a tab and a newline moved text to
	// another field and entry: one entry whose uri is
	// "<uri0>\t<hash0>\n1\t<uri1>" read as the two entries of a genuine
	// run, so a forged one-entry bundle recomputed to the genuine root.
	// The script now stops at such an entry; others it hashes as the rule.
	two := []BundleEntry{
		{Position: 0, URI: "readproof://demo/a", ContentHash: "sha256:" + strings.Repeat("a", 64)},
		{Position: 1, URI: "readproof://demo/b", ContentHash: "sha256:" + strings.Repeat("b", 64)},
	}
	for _, es := range [][]BundleEntry{two, {{Position: 7, URI: "readproof://d/ é x\\y ", ContentHash: " h"}}} {
		leaves, err := entryLeaves(es)
		if err != nil {
			t.Fatal(err)
		}
		want := Root(leaves)
		data, _ := json.Marshal(map[string]any{"predicate": map[string]any{"entries": es}})
		if got := root(data); got != hex.EncodeToString(want[:]) {
			t.Fatalf("script root %s of %q, the rule gives %x", got, data, want)
		}
	}
	// an entry the rule cannot hash stops the script: it prints no root
	// of the entries before it
	forged, _ := json.Marshal(BundleEntry{Position: 1, URI: two[0].URI + "\t" + two[0].ContentHash + "\n1\t" + two[1].URI, ContentHash: two[1].ContentHash})
	for _, bad := range []string{string(forged), `{"position":1,"uri":"a\u0000","content_hash":"b"}`, `{"position":1,"uri":"a","content_hash":"b\u007f"}`,
		`{"position":1,"uri":"","content_hash":"b"}`, `{"position":1,"uri":"a","content_hash":""}`,
		`{"position":0.5,"uri":"a","content_hash":"b"}`, `{"position":-1,"uri":"a","content_hash":"b"}`, `{"position":4294967296,"uri":"a","content_hash":"b"}`,
		`{"position":1,"uri":1,"content_hash":"b"}`, `{"position":1,"uri":"a"}`} {
		p := filepath.Join(dir, "bad.json")
		if err := os.WriteFile(p, []byte(`{"predicate":{"entries":[{"position":0,"uri":"a","content_hash":"b"},`+bad+`]}}`), 0o644); err != nil {
			t.Fatal(err)
		}
		if out, err := exec.Command("sh", script, p).CombinedOutput(); err == nil {
			t.Fatalf("merkle-root.sh passed %s: %s", bad, out)
		}
	}
}

// TestDecodePAE: decoding a payload's text straight into PAE gives
// PAE(type, decodeB64(text)) for each encoding decodeB64 takes, also where
// the payload's length has fewer digits than the most the text could hold
// (its head moves left), and refuses what decodeB64 refuses.
func TestDecodePAE(t *testing.T) {
	t.Parallel()
	for _, n := range []int{0, 1, 2, 3, 8, 9, 10, 11, 98, 99, 100, 101, 997, 998, 999, 1000, 1001} {
		payload := make([]byte, n)
		for i := range payload {
			payload[i] = byte(i*7 + n)
		}
		for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.URLEncoding, base64.RawStdEncoding, base64.RawURLEncoding} {
			text := enc.EncodeToString(payload)
			if n == 9 || n == 99 {
				text += "\r\n\r\n\r\n" // skipped by the decoder: the most it could hold has one digit more
			}
			want, err := decodeB64(text)
			if err != nil {
				t.Fatal(err)
			}
			pae, got, err := decodePAE(PayloadType, []byte(text))
			if err != nil || !bytes.Equal(got, want) || !bytes.Equal(pae, PAE(PayloadType, want)) {
				t.Fatalf("%d bytes as %q: payload %q, PAE %q, %v", n, text, got, pae, err)
			}
		}
	}
	for _, text := range []string{"e30", "e30==", "!!!!", "e3=0", "e30=\x00"} {
		_, werr := decodeB64(text)
		pae, got, err := decodePAE(PayloadType, []byte(text))
		if (err == nil) != (werr == nil) || (err == nil && !bytes.Equal(pae, PAE(PayloadType, got))) {
			t.Fatalf("%q: decodePAE %q, %v; decodeB64 %v", text, got, err, werr)
		}
	}
}
