package main

import (
	"bytes"
	"crypto/sha1"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/readproof/readproof/evidence"
	"github.com/readproof/readproof/internal/store"
)

// Custom testscript commands for testdata/script/evidence*.txtar.

// evExportUncheckedCmd writes the bundle of RUN from the store at STORE
// without the store checks by which `evidence export` refuses a forged run
// (since session 24): the file a forger, or an exporter without those
// checks, hands an auditor, for the scripts that hold `evidence verify`
// to fail it. `evexport-unchecked STORE RUN OUT`; no policy is read, so
// every resource is marked missing (no check reads resources).
func evExportUncheckedCmd(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 3 {
		ts.Fatalf("usage: evexport-unchecked STORE RUN OUT")
	}
	s, err := store.Open(ts.MkAbs(args[0]), nil, store.Options{})
	ts.Check(err)
	defer s.Close()
	data, _, err := s.ExportEvidence(args[1], store.EvidenceOptions{ExporterVersion: "test"})
	ts.Check(err)
	ts.Check(os.WriteFile(ts.MkAbs(args[2]), data, 0o644))
}

// evEditCmd edits an exported bundle in place the way a tamperer would:
// `evedit FILE OP`. Plain statements: content (flip a byte of entry 0's
// embedded bytes), hash (change entry 0's content_hash), reorder (swap
// entries 0 and 1), remove-last, dup-last (append a copy of the last
// entry), provenance (change entry 0's provenance path), materialization
// (change entry 0's materialization_id), reroot (give entry 0 other bytes and recompute its hash, the
// root, the counts and the replay block: consistent offline),
// replay-error-mimic (an exporter's replay error whose text reads like the
// check's own words for bytes the store did not reproduce). Envelopes:
// payload-byte (flip a byte of the signed payload), payload-type (change
// payloadType), reroot (reroot the payload, keep the signature).
func evEditCmd(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 2 {
		ts.Fatalf("usage: evedit FILE OP")
	}
	path := ts.MkAbs(args[0])
	data, err := os.ReadFile(path)
	ts.Check(err)
	var env evidence.Envelope
	isEnvelope := json.Unmarshal(data, &env) == nil && env.PayloadType != ""
	op := args[1]
	switch {
	case isEnvelope && op == "payload-byte":
		payload, err := base64.StdEncoding.DecodeString(env.Payload)
		ts.Check(err)
		i := bytes.Index(payload, []byte(`"run_id": "`)) + len(`"run_id": "`)
		payload[i] ^= 0x01
		env.Payload = base64.StdEncoding.EncodeToString(payload)
	case isEnvelope && op == "payload-type":
		env.PayloadType = "application/json"
	case isEnvelope && op == "reroot":
		payload, err := base64.StdEncoding.DecodeString(env.Payload)
		ts.Check(err)
		env.Payload = base64.StdEncoding.EncodeToString(editStatement(ts, payload, op))
	case isEnvelope:
		ts.Fatalf("evedit: unknown envelope op %q", op)
	default:
		ts.Check(os.WriteFile(path, editStatement(ts, data, op), 0o644))
		return
	}
	out, err := json.Marshal(env)
	ts.Check(err)
	ts.Check(os.WriteFile(path, append(out, '\n'), 0o644))
}

// otherPredicate reads the predicate of the bundle at file, which must
// carry member (proof_of_read or receipts), for evedit's splices.
func otherPredicate(ts *testscript.TestScript, file, member string) evidence.Predicate {
	var other evidence.Statement
	data, err := os.ReadFile(ts.MkAbs(file))
	ts.Check(err)
	ts.Check(json.Unmarshal(data, &other))
	p := other.Predicate
	if member == "proof_of_read" && len(p.ProofOfRead) == 0 || member == "receipts" && len(p.Receipts) == 0 {
		ts.Fatalf("evedit: %s carries no %s", file, member)
	}
	return p
}

func editStatement(ts *testscript.TestScript, data []byte, op string) []byte {
	var st evidence.Statement
	ts.Check(json.Unmarshal(data, &st))
	p := &st.Predicate
	es := p.Entries
	if len(es) == 0 {
		ts.Fatalf("evedit: the bundle has no entries")
	}
	switch {
	case strings.HasPrefix(op, "proof-of-read-from="):
		// another bundle's proof_of_read, spliced in as it stands
		p.ProofOfRead = otherPredicate(ts, strings.TrimPrefix(op, "proof-of-read-from="), "proof_of_read").ProofOfRead
		out, err := evidence.Marshal(&st)
		ts.Check(err)
		return out
	case strings.HasPrefix(op, "receipts-from="):
		// another bundle's receipt summary, spliced in as it stands
		p.Receipts = otherPredicate(ts, strings.TrimPrefix(op, "receipts-from="), "receipts").Receipts
		out, err := evidence.Marshal(&st)
		ts.Check(err)
		return out
	}
	switch op {
	case "content":
		b, err := base64.StdEncoding.DecodeString(es[0].ContentB64)
		ts.Check(err)
		if len(b) == 0 {
			ts.Fatalf("evedit: entry 0 embeds no content")
		}
		b[len(b)/2] ^= 0x01
		es[0].ContentB64 = base64.StdEncoding.EncodeToString(b)
	case "hash":
		es[0].ContentHash = "sha256:" + strings.Repeat("ab", 32)
	case "reorder":
		if len(es) < 2 {
			ts.Fatalf("evedit: reorder needs two entries")
		}
		es[0], es[1] = es[1], es[0]
	case "remove-last":
		p.Entries = es[:len(es)-1]
	case "dup-last":
		p.Entries = append(es, es[len(es)-1])
	case "provenance":
		es[0].Provenance["path"] = "elsewhere/refunds.md"
	case "materialization":
		es[0].MaterializationID = strings.Repeat("0", 40)
	case "replay-error-mimic":
		if p.Replay == nil {
			ts.Fatalf("evedit: the bundle has no replay block")
		}
		p.Replay.Error = "x (all_match false): the store did not reproduce the recorded bytes"
	case "no-run-ref":
		if p.Git == nil {
			ts.Fatalf("evedit: the bundle has no git block")
		}
		p.Git.RunRef = ""
	case "reroot":
		forged := []byte("Products can be refunded within 365 days.\n")
		sum := sha256.Sum256(forged)
		h := sha1.New()
		fmt.Fprintf(h, "blob %d\x00", len(forged))
		h.Write(forged)
		es[0].ContentHash = "sha256:" + hex.EncodeToString(sum[:])
		es[0].SnapshotID = hex.EncodeToString(h.Sum(nil))
		es[0].MaterializationID = es[0].SnapshotID
		es[0].Bytes = int64(len(forged))
		if es[0].ContentB64 != "" {
			es[0].ContentB64 = base64.StdEncoding.EncodeToString(forged)
		}
		leaves := make([][32]byte, len(es))
		for i, e := range es {
			leaves[i] = evidence.Leaf(uint32(e.Position), e.URI, e.ContentHash)
		}
		root := evidence.Root(leaves)
		p.Merkle.Root = hex.EncodeToString(root[:])
		st.Subject[0].Digest["sha256"] = p.Merkle.Root
		if p.Replay != nil && len(p.Replay.Entries) > 0 {
			p.Replay.Entries[0].ExpectedHash = es[0].ContentHash
			p.Replay.Entries[0].ActualHash = es[0].ContentHash
		}
	default:
		ts.Fatalf("evedit: unknown op %q", op)
	}
	out, err := evidence.Marshal(&st)
	ts.Check(err)
	return out
}

// commitEditCmd writes an edited copy of a signed commit, its gpgsig header
// kept and its message changed, and puts the new id in an environment
// variable: `commitedit GITDIR REV VAR`.
func commitEditCmd(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 3 {
		ts.Fatalf("usage: commitedit GITDIR REV VAR")
	}
	gitDir := ts.MkAbs(args[0])
	raw, err := exec.Command("git", "--git-dir", gitDir, "cat-file", "commit", args[1]).Output()
	ts.Check(err)
	if !bytes.Contains(raw, []byte("\ngpgsig ")) {
		ts.Fatalf("commitedit: %s is not signed", args[1])
	}
	edited := bytes.Replace(raw, []byte("readproof run "), []byte("readproof run (edited) "), 1)
	if bytes.Equal(edited, raw) {
		ts.Fatalf("commitedit: %s is not a manifest commit", args[1])
	}
	cmd := exec.Command("git", "--git-dir", gitDir, "hash-object", "-t", "commit", "-w", "--stdin")
	cmd.Stdin = bytes.NewReader(edited)
	out, err := cmd.Output()
	ts.Check(err)
	ts.Setenv(args[2], strings.TrimSpace(string(out)))
}

// mkSignersCmd writes an allowed_signers file of one line for the public
// key in an authorized_keys file: `mksigners OUT PUBFILE PRINCIPAL
// [OPTIONS]`, OPTIONS such as valid-before="20000101Z".
func mkSignersCmd(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) < 3 || len(args) > 4 {
		ts.Fatalf("usage: mksigners OUT PUBFILE PRINCIPAL [OPTIONS]")
	}
	pub, err := os.ReadFile(ts.MkAbs(args[1]))
	ts.Check(err)
	line := strconv.Quote(args[2])
	if len(args) == 4 {
		line += " " + args[3]
	}
	line += " " + strings.TrimSpace(string(pub)) + "\n"
	ts.Check(os.WriteFile(ts.MkAbs(args[0]), []byte(line), 0o644))
}
