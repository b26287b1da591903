package commands

// `readproof evidence export|verify` and `readproof verify-commit`
// (docs/evidence.md).

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/readproof/readproof/evidence"
	"github.com/readproof/readproof/gitstore"
	"github.com/readproof/readproof/identity"
	"github.com/readproof/readproof/internal/buildinfo"
	"github.com/readproof/readproof/internal/fspath"
	"github.com/readproof/readproof/internal/hint"
	"github.com/readproof/readproof/internal/keyloc"
	"github.com/readproof/readproof/internal/policy"
	"github.com/readproof/readproof/internal/progress"
	"github.com/readproof/readproof/internal/proofread"
	"github.com/readproof/readproof/internal/store"
	"github.com/readproof/readproof/internal/text"
	"github.com/readproof/readproof/receipts"
)

// maxBundleBytes bounds the bundle `evidence verify` reads.
const maxBundleBytes = 4 << 30

func evidenceCommand() *cli.Command {
	return &cli.Command{
		Name:  "evidence",
		Usage: "export a run as an in-toto evidence bundle (Readproof v0.3 format), optionally signed, and verify bundles",
		Subcommands: []*cli.Command{
			{
				Name:      "export",
				Usage:     "write the evidence bundle of a run or manifest (stdout unless --out); a forged record is refused (exit 3), a store it cannot read stops it (exit 4), nothing written; damage, a replace ref or a run the journal does not record is warned of",
				ArgsUsage: "RUN|MANIFEST",
				Flags: []cli.Flag{
					&cli.BoolFlag{Name: "with-content", Usage: "embed the delivered bytes (content_b64)"},
					&cli.StringFlag{Name: "out", Usage: "write the bundle to FILE (a regular file atomically; - for stdout) instead of stdout"},
					&cli.BoolFlag{Name: "sign", Usage: "wrap the statement in a DSSE envelope signed with the ed25519 signing key"},
					&cli.StringFlag{Name: "key", Usage: "the signing key for --sign (default: " + keyloc.SigningKeyEnv + ", else [signing] key, else $XDG_CONFIG_HOME/readproof/evidence_ed25519)"},
				},
				Action: evidenceExport,
			},
			{
				Name:      "verify",
				Usage:     "verify a bundle (plain or signed): print one line when every check passes, else every check, and exit 3 (4 when the store could not be read)",
				ArgsUsage: "FILE",
				Flags: []cli.Flag{
					&cli.BoolFlag{Name: "offline", Usage: "check the file alone: skip the store checks"},
					&cli.StringFlag{Name: "trusted-keys", Aliases: []string{"allowed-signers"}, Usage: "public keys to trust (allowed_signers, authorized_keys or PKIX PEM; default: [signing] allowed_signers)"},
					&cli.BoolFlag{Name: "require-signature", Usage: "fail a bundle that is not a DSSE envelope signed by a trusted key"},
				},
				Action: evidenceVerify,
			},
		},
	}
}

func verifyCommitCommand() *cli.Command {
	return &cli.Command{
		Name:      "verify-commit",
		Usage:     "check the SSH signature of manifest commits as `git verify-commit` with gpg.format=ssh does",
		ArgsUsage: "RUN|MANIFEST...",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "allowed-signers", Usage: "the allowed_signers file (default: [signing] allowed_signers)"},
		},
		Action: verifyCommit,
	}
}

func evidenceExport(c *cli.Context) error {
	if err := needArgs(c, 1, 1, "RUN|MANIFEST [--with-content] [--out FILE] [--sign [--key PATH]]"); err != nil {
		return err
	}
	opts := evidenceExportOptions{Key: c.String("key"), Sign: c.Bool("sign"), WithContent: c.Bool("with-content"), Out: c.String("out")}
	return withEnv(c, func(e *env) error { return runEvidenceExport(c.Context, e, opts, c.Args().Slice()) })
}

// writeOut writes data to path: a regular file (or a new one) atomically,
// anything else that is there (a FIFO, a device, /dev/stdout on a pipe) in
// place, since renaming a file over it would replace it rather than write to
// it. A symbolic link is followed: the file it names is replaced, the link
// stays.
func writeOut(ctx context.Context, path string, data []byte) error {
	if fi, err := os.Stat(path); err == nil && !fi.Mode().IsRegular() {
		return writeInPlace(ctx, path, data)
	}
	// a link: the file it ends at, also one that does not exist yet
	if fi, err := os.Lstat(path); err == nil && fi.Mode()&os.ModeSymlink != 0 {
		target, err := fspath.Resolve(path)
		if err != nil {
			return hint.With(fmt.Errorf("write %s: %w", path, err), "give --out a file, or a link that ends at one")
		}
		path = target
	}
	return writeFileAtomic(path, data)
}

// writeInPlace opens path, which is not a regular file, and writes data to
// it. Opening a FIFO waits for its reader, and writing to it for the reader
// to read: both run aside, so that SIGINT or SIGTERM (the end of ctx) still
// stops the command, with exit 130, while they wait.
func writeInPlace(ctx context.Context, path string, data []byte) (err error) {
	done := make(chan error, 1)
	go func() {
		f, err := os.OpenFile(path, os.O_WRONLY, 0)
		if err != nil {
			done <- err
			return
		}
		if _, err := f.Write(data); err != nil {
			f.Close()
			done <- err
			return
		}
		done <- f.Close()
	}()
	select {
	case err = <-done:
	case <-ctx.Done():
		return interrupted(ctx)
	}
	if err != nil {
		return hint.With(fmt.Errorf("write %s: %w", path, err), "give --out a regular file, or - for stdout")
	}
	return nil
}

// writeFileAtomic writes data to a temporary file beside path, fsyncs it and
// renames it over path, so a reader sees the old file or the whole new one
// and a failure leaves nothing half-written.
func writeFileAtomic(path string, data []byte) (err error) {
	dir := filepath.Dir(path)
	sweepKilledWrites(dir, "."+filepath.Base(path)+".tmp-")
	f, err := os.CreateTemp(dir, "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		// the temporary file's name is no name the user gave: say which
		// directory refused, and why
		var pe *fs.PathError
		if errors.As(err, &pe) {
			err = fmt.Errorf("directory %s: %w", dir, pe.Err)
		}
		h := "check that the directory exists and is writable"
		if errors.Is(err, fs.ErrNotExist) {
			h = "create the directory first (mkdir -p " + text.ShellArg(dir) + "), or give --out a file in a directory that exists"
		}
		return hint.With(fmt.Errorf("write %s: %w", path, err), h)
	}
	tmp := f.Name()
	defer func() {
		if err != nil {
			f.Close()
			os.Remove(tmp)
			what := gitstore.WriteLimitRemedy(err, "it")
			if what == "" {
				what = "free space on (or repair) the file system that holds it"
			}
			err = hint.With(err, "nothing was written at "+path+" (a file already there is unchanged): "+what+", then export again")
		}
	}()
	if _, err = f.Write(data); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err = f.Chmod(0o644); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err = f.Sync(); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err = f.Close(); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err = os.Rename(tmp, path); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if d, derr := os.Open(dir); derr == nil {
		_ = d.Sync()
		d.Close()
	}
	return nil
}

// killedWriteAge is the age from which a temporary file of writeFileAtomic
// is taken as left by a killed process: the next write of the same path
// removes it. A younger one may be another export's at work (a bundle is
// written, synced and renamed within seconds).
const killedWriteAge = 10 * time.Minute

// sweepKilledWrites removes the regular files prefix+digits in dir older
// than killedWriteAge: what an export killed before its rename left, as
// large as its bundle. Nothing else is touched (no link, no other name).
func sweepKilledWrites(dir, prefix string) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	for _, e := range entries {
		rest, ok := strings.CutPrefix(e.Name(), prefix)
		if !ok || rest == "" || strings.Trim(rest, "0123456789") != "" || !e.Type().IsRegular() {
			continue
		}
		if fi, err := e.Info(); err == nil && time.Since(fi.ModTime()) > killedWriteAge {
			os.Remove(filepath.Join(dir, e.Name()))
		}
	}
}

// verifyJSON is the --json shape of `evidence verify`.
type verifyJSON struct {
	OK         bool        `json:"ok"`
	Summary    string      `json:"summary,omitempty"`
	ManifestID string      `json:"manifest_id"`
	RunID      string      `json:"run_id"`
	Entries    int         `json:"entries"`
	Root       string      `json:"merkle_root"`
	Signer     string      `json:"signer,omitempty"`
	Offline    bool        `json:"offline"`
	Checks     []checkJSON `json:"checks"`
	// Warnings say what could not be checked (a probe key file that is
	// there but unusable leaves the verdict record's MAC unchecked).
	Warnings []string `json:"warnings,omitempty"`
}

// hasCheck reports whether rep ran the check named name.
func hasCheck(rep evidence.Report, name string) bool {
	for _, c := range rep.Checks {
		if c.Name == name {
			return true
		}
	}
	return false
}

type checkJSON struct {
	Name   string `json:"name"`
	OK     bool   `json:"ok"`
	Detail string `json:"detail"`
	// Kind is the check's kind when it has one (checkKind), absent
	// otherwise: what a script matches to tell a read the store refused
	// (could_not_read, exit 4) from a record found wrong (exit 3).
	Kind string `json:"kind,omitempty"`
}

// checkKind is the kind `evidence verify --json` gives check c: its Kind
// (docs/json.md lists them), or could_not_read for a failed replay check
// whose error is a read the store refused (store.CouldNotRead), as
// couldNotReadHint counts it; "" for the rest.
func checkKind(c evidence.Check) string {
	if c.Kind == "" && !c.OK && c.Err != nil && store.CouldNotRead(c.Err) {
		return store.KindCouldNotRead
	}
	return c.Kind
}

// checkJSONOf is check c as `evidence verify --json` and a stopped
// `evidence export --json` list it: its detail escaped as stderr escapes
// it (a store check's detail may quote an error that names a path of the
// store, with a control or bidi character in it).
func checkJSONOf(c evidence.Check) checkJSON {
	return checkJSON{Name: c.Name, OK: c.OK, Detail: text.Escape(c.Detail), Kind: checkKind(c)}
}

func evidenceVerify(c *cli.Context) error {
	if err := needArgs(c, 1, 1, "FILE [--offline] [--trusted-keys FILE] [--require-signature] [--store DIR]"); err != nil {
		return err
	}
	opts := evidenceVerifyOptions{TrustedKeys: c.String("trusted-keys"), Offline: c.Bool("offline"), RequireSignature: c.Bool("require-signature")}
	return withEnv(c, func(e *env) error { return runEvidenceVerify(c.Context, e, opts, c.Args().Slice()) })
}

// verifyHint reads the pattern of failing checks.
func verifyHint(rep evidence.Report, trusted bool) string {
	failed := map[string]bool{}
	offlineFailed, storeFailed, absent := false, false, false
	// notReplayed: the only offline check that failed is the record that
	// the store did not replay at export (honest, not an edit)
	notReplayed := true
	for _, c := range rep.Failed() {
		failed[c.Name] = true
		// the manifest is not in the store at all
		absent = absent || c.Name == "store_replay_count" && errors.Is(c.Err, store.ErrUnknownTarget)
		switch c.Name {
		case store.CheckStoreManifest:
			storeFailed = true
		case store.CheckCommitSignature, store.CheckReceipts, store.CheckProofOfRead, store.CheckStoreReplace, store.CheckJournal:
			// the store's additions: neither a replay nor an offline check
		default:
			if strings.HasPrefix(c.Name, "store_replay") {
				storeFailed = true
				break
			}
			offlineFailed = true
			notReplayed = notReplayed && c.Kind == evidence.KindNotReproduced
		}
	}
	switch {
	case failed["signature"] && !rep.Signed:
		// --require-signature of a plain statement: no key helps
		run := "RUN"
		if identity.IsObjectID(rep.ManifestID) {
			run = rep.ManifestID
		}
		return "the bundle is a plain statement, not a signed envelope, and --require-signature asks for a signature: export it signed (`readproof evidence export " + run + " --sign --out FILE`)"
	case failed["signature"] && !trusted:
		return "pass the signer's public key with --trusted-keys FILE (allowed_signers, authorized_keys or PEM), or set [signing] allowed_signers in readproof.toml"
	case failed["signature"] || failed["payload_type"]:
		return "the envelope was changed after signing, or signed by a key you do not trust: do not rely on its content"
	case failed[store.CheckStoreReplace] && !offlineFailed:
		return "the store makes stock git read other objects than it holds (refs/replace/, info/grafts or commondir): remove what store_replace names, then verify again; `readproof --store STORE verify` checks the rest of the store"
	case failed[store.CheckJournal] && !offlineFailed && !storeFailed && len(failed) == 1:
		return "the store's journal (" + store.JournalRef + ") does not record the manifest: a writer stopped before recording it, or the run was written by hand with stock git; `readproof --store STORE verify` warns of either, and `readproof gc` records a run a stopped writer left unrecorded, then verify again"
	case !offlineFailed && !storeFailed && hasKind(rep, store.CheckReceipts, store.KindBindingEdited):
		return store.BindingEditedRemedy + ", then verify again"
	case notReplayed && failed["recorded_replay"] && storeFailed && !absent:
		return "the store could not give back the recorded bytes of the entries named above, at export and now: an object of the store is damaged or missing (`readproof verify` names it); restore it from a clone (readproof pull) or a backup, then export again"
	case notReplayed && failed["recorded_replay"] && !storeFailed && storeChecked(rep):
		return "the store did not give back the recorded bytes when the bundle was exported, and does now (the object was restored): export again"
	case notReplayed && failed["recorded_replay"] && !storeChecked(rep):
		return "the bundle records that its store did not give back the recorded bytes at export (a damaged store, or the file was edited): verify it against the store, without --offline, to tell which"
	case absent && !offlineFailed && identity.IsObjectID(rep.ManifestID):
		// an auditor's copy made before the run was shared looks the same
		// as a forgery to the store: the likelier cause comes first
		return "the store does not hold manifest " + rep.ManifestID + ": a copy of the store made before the run was shared lacks it: fetch it again (git --git-dir STORE fetch, readproof pull) and verify again; a store that is current and lacks it was never given the run (a re-rooted forgery)"
	case storeFailed && !offlineFailed && hasKind(rep, store.CheckStoreManifest, store.KindUnrecordedRename):
		return "a run ref of this store names the bundle's manifest though the journal records no rename of the run to it (`conflicts rename` records one): the ref was moved by hand; `readproof --store STORE verify` names it: restore the run refs from a clone (readproof pull) or a backup, then verify again"
	case storeFailed && !offlineFailed && movedRunRef(rep) != "":
		return "the store's " + movedRunRef(rep) + " names another manifest than the bundle: either its history was rewritten after the export (a moved run tag), or the bundle names a manifest that was never the run's (a forgery); `readproof --store STORE verify` tells them apart: it reports a run tag that moved away from the manifest the journal records"
	case storeFailed && !offlineFailed && identity.IsObjectID(rep.ManifestID):
		return "the file is consistent but does not match the store: a re-rooted forgery, or the store changed; compare it with `readproof manifest " + rep.ManifestID + "`"
	case storeFailed && !offlineFailed:
		return "the file is consistent but does not match the store: a re-rooted forgery, or the store changed"
	case failed["parse"] || failed["statement_type"] && failed["predicate_type"]:
		// no statement at all (readproof.toml, another tool's JSON), or
		// one edited past reading
		return "this is not an evidence bundle (an in-toto statement or a DSSE envelope): give the file written by `readproof evidence export`; if it is one, it was edited after export: export it again from the store"
	case offlineFailed:
		return "the file was edited after export: export it again from the store"
	}
	return "see the failing checks above"
}

// hasKind reports whether a failed check of rep named name has kind.
func hasKind(rep evidence.Report, name, kind string) bool {
	for _, c := range rep.Failed() {
		if c.Name == name && c.Kind == kind {
			return true
		}
	}
	return false
}

// movedRunRef is the run ref that store_manifest found naming another
// manifest than the bundle's ("" when it failed otherwise, or passed).
func movedRunRef(rep evidence.Report) string {
	for _, c := range rep.Failed() {
		if c.Name != store.CheckStoreManifest {
			continue
		}
		d := c.Detail
		// "REF names manifest X in this store, not Y", or without the
		// bundle's git.run_ref "no run of this store names manifest Y: REF names X; ..."
		if rest, ok := strings.CutPrefix(d, "no run of this store names manifest "); ok {
			if _, after, ok := strings.Cut(rest, ": "); ok {
				d = after
			}
		}
		if ref, _, ok := strings.Cut(d, " names "); ok && strings.HasPrefix(ref, store.RunsPrefix) && !strings.Contains(ref, " ") {
			return ref
		}
	}
	return ""
}

// verifySummary is the success line: the report's, then what the store
// check found of the manifest commit's signature, which the auditor who
// reads only this line would otherwise not learn.
//
// It also says when the store check passed the run's tool receipts or its
// proof-of-read verdicts without checking their MACs (no key at hand, or a
// key of another issuer): both are authenticated by a secret key, so an
// auditor without the issuer's key learns from the store only that they are
// there, which whoever could write the store could have made. Before
// session 29 the line said "evidence verified" and nothing of it.
//
// It tells the checks apart by their kinds (store.KindSignerUnchecked,
// KindReceiptMACs*, KindVerdict*), never by their details' words, which a
// rewording of a detail would silently no longer match (before session 31
// it matched the words).
func verifySummary(rep evidence.Report) string {
	line := rep.Summary()
	for _, c := range rep.Checks {
		if c.Name != store.CheckCommitSignature || !c.OK {
			continue
		}
		if c.Kind == store.KindSignerUnchecked {
			line += ", manifest commit signature valid (signer not checked: pass --trusted-keys)"
		} else {
			line += ", manifest commit " + c.Detail // "signed by PRINCIPAL with KEY"
		}
		break
	}
	for _, c := range rep.Checks {
		if !c.OK {
			continue
		}
		switch {
		case c.Name == store.CheckJournal && c.Kind == store.KindJournalUnchecked:
			// the bounded walk stopped before the manifest: a run written
			// by hand into a long journal passed with a warning on stderr
			// only (before session 30 this line said nothing of it)
			line += ", journal record not checked (beyond the newest journal commits the check reads: `readproof verify` walks them all)"
		case c.Name == store.CheckReceipts && c.Kind == store.KindReceiptMACsUnchecked:
			line += ", tool receipts MACs not checked (no receipts key: READPROOF_RECEIPTS_KEY names the issuer's)"
		case c.Name == store.CheckReceipts && c.Kind == store.KindReceiptMACsOtherKey:
			// every receipt under another key than the auditor's own
			// default one: none was checked (before session 30 the line
			// said "partly")
			line += ", tool receipts MACs not checked (made under another key: READPROOF_RECEIPTS_KEY names the issuer's)"
		case c.Name == store.CheckReceipts && c.Kind == store.KindReceiptMACsPartly:
			line += ", tool receipts MACs partly not checked (some made under another key: see --json)"
		case c.Name == store.CheckProofOfRead && c.Kind == store.KindVerdictMACUnchecked:
			line += ", proof-of-read verdicts MAC not checked (no probe key)"
		case c.Name == store.CheckProofOfRead && c.Kind == store.KindVerdictMACOtherKey:
			line += ", proof-of-read verdicts MAC not checked (another probe key)"
		case c.Name == store.CheckProofOfRead && c.Kind == store.KindVerdictNoMAC:
			// a record of a manifest mounted before verdict records were
			// authenticated: nothing vouches for it, key or no key
			// (before session 30 the line said nothing of it)
			line += ", proof-of-read verdicts carry no MAC (recorded before verdict records were authenticated)"
		}
	}
	return line
}

// commitSignerChecked reports whether the store check vouched for the
// manifest commit's signer with the trusted keys.
func commitSignerChecked(rep evidence.Report) bool {
	for _, c := range rep.Checks {
		if c.Name == store.CheckCommitSignature && c.OK && c.Kind != store.KindSignerUnchecked {
			return true
		}
	}
	return false
}

// storeChecked reports whether the bundle's entries were replayed from the
// store (not --offline).
func storeChecked(rep evidence.Report) bool {
	for _, c := range rep.Checks {
		if strings.HasPrefix(c.Name, "store_replay[") {
			return true
		}
	}
	return false
}

// bundleName is the bundle FILE as a warning names it ("-": stdin).
func bundleName(file string) string {
	if file == "-" {
		return "the bundle on stdin"
	}
	return text.Printable(file)
}

// readBundle reads FILE, or stdin for "-".
func readBundle(stdin io.Reader, name string) ([]byte, error) {
	var r io.Reader
	var data []byte
	if name == "-" {
		r = stdin
		if r == nil {
			r = os.Stdin
		}
	} else {
		const giveFile = "give the file written by `readproof evidence export --out`, or - for stdin"
		// what FILE is, is judged from the file opened (without waiting
		// for a named pipe's writer): a named pipe or a device (/dev/zero)
		// is refused before anything is read; a pipe handed to readproof
		// (<(...), /dev/stdin) is read as stdin is, to the bound
		f, fi, err := fspath.OpenRegular(name)
		var ke *fspath.KindError
		switch {
		case errors.As(err, &ke) && ke.Mode.IsDir():
			return nil, hint.With(fmt.Errorf("read bundle %s: it is a directory", name), giveFile)
		case errors.As(err, &ke) && ke.Mode&fs.ModeNamedPipe != 0:
			return nil, hint.With(fmt.Errorf("read bundle %s: it is a named pipe, not a regular file; nothing was read from it", name),
				giveFile+" (a bundle that comes through a pipe: readproof evidence verify - < "+text.ShellArg(name)+")")
		case errors.As(err, &ke):
			return nil, hint.With(fmt.Errorf("read bundle %s: it is %s, not a regular file; nothing was read from it", name, fspath.DescribeMode(ke.Mode)), giveFile)
		case err != nil:
			return nil, hint.With(fmt.Errorf("read bundle %s: %w", name, err), giveFile)
		}
		defer f.Close()
		r = f
		if fi.Mode().IsRegular() && fi.Size() > maxBundleBytes {
			return nil, hint.With(fmt.Errorf("bundle %s is %d bytes, larger than %d GiB, more than any export; nothing was read from it", name, fi.Size(), maxBundleBytes>>30), giveFile)
		}
		// A regular file is read into one allocation of its size and a
		// byte more (to see that it grew). Not bytes.Buffer.Grow: its
		// append clears megabytes in one step the garbage collector
		// cannot preempt, and every other goroutine's allocation then
		// waits on it (8 ms of a 1,000-document verify's 30). A file
		// that grows meanwhile is read on below.
		if err == nil && fi.Mode().IsRegular() && fi.Size() < maxBundleBytes {
			data = make([]byte, fi.Size()+1)
			n, err := io.ReadFull(f, data)
			switch {
			case err == io.EOF || err == io.ErrUnexpectedEOF:
				return data[:n], nil
			case err != nil:
				return nil, fmt.Errorf("read bundle %s: %w", name, err)
			}
			data = data[:n]
		}
	}
	buf := bytes.NewBuffer(data)
	if _, err := buf.ReadFrom(io.LimitReader(r, maxBundleBytes+1-int64(len(data)))); err != nil {
		return nil, fmt.Errorf("read bundle %s: %w", name, err)
	}
	if buf.Len() > maxBundleBytes {
		return nil, fmt.Errorf("bundle %s is larger than %d GiB, more than any export", name, maxBundleBytes>>30)
	}
	return buf.Bytes(), nil
}

// maxKeysFileBytes bounds a file of public keys (--trusted-keys,
// --allowed-signers): some 100,000 keys.
const maxKeysFileBytes = 16 << 20

// readKeysFile reads a file of public keys: a regular file, or a pipe
// handed to readproof, of at most maxKeysFileBytes, judged from the file
// opened (fspath.ReadRegular); a named pipe or a device (/dev/zero) is
// refused before anything is read from it.
func readKeysFile(path string) ([]byte, error) {
	return fspath.ReadRegular(path, maxKeysFileBytes, "a file of public keys")
}

// loadTrust reads trusted public keys from path (evidence.ParseTrust): for
// DSSE envelopes every ed25519 key that may sign now, for manifest commit
// signatures the file as allowed_signers. "" trusts nothing. warnings name
// the allowed_signers lines whose window leaves their key out of the
// envelope keys.
func loadTrust(path string, now time.Time) (keys []ed25519.PublicKey, signers evidence.AllowedSigners, warnings []string, err error) {
	if path == "" {
		return nil, nil, nil, nil
	}
	data, err := readKeysFile(path)
	if err != nil {
		return nil, nil, nil, withCode(ExitUsage, hint.With(fmt.Errorf("read trusted keys %s: %w", path, err),
			"give an allowed_signers, authorized_keys or PEM file holding the signer's public key (readproof key show prints them)"))
	}
	keys, signers, outside, err := evidence.ParseTrust(data, now)
	if err != nil {
		return nil, nil, nil, withCode(ExitUsage, hint.With(fmt.Errorf("trusted keys %s: %w", path, err),
			"the file must hold ed25519 public keys as allowed_signers or authorized_keys lines, or PKIX PEM"))
	}
	for _, w := range outside {
		warnings = append(warnings, fmt.Sprintf("trusted keys %s: line %d: the key of %s %s: it vouches for no signed bundle", text.Printable(path), w.Line, text.Printable(w.Principals), w.Why))
	}
	return keys, signers, warnings, nil
}

// loadReceiptsKey loads the receipts key evidence export and verify check
// receipt MACs with (keyloc.ReceiptsForCheck, which the MCP server's export
// calls too): the one configured, else the one at the default location
// (found is then true); nil when there is none. Before session 29
// (evaudit) the default key was not looked for, and a receipt edited in
// the store passed export and verify while `receipts list` said tampered.
func loadReceiptsKey(e *env, pol *policy.File) (key *receipts.Key, found bool, err error) {
	return keyloc.ReceiptsForCheck(e.storePath, pol)
}

func verifyCommit(c *cli.Context) error {
	if err := needArgs(c, 1, -1, "RUN|MANIFEST... [--allowed-signers FILE]"); err != nil {
		return err
	}
	opts := verifyCommitOptions{AllowedSigners: c.String("allowed-signers")}
	return withEnv(c, func(e *env) error { return runVerifyCommit(c.Context, e, opts, c.Args().Slice()) })
}

func isSignatureError(err error) bool {
	for _, target := range []error{evidence.ErrNotSigned, evidence.ErrBadSignature, evidence.ErrUntrustedKey, evidence.ErrKeyNotValid, store.ErrReplaced} {
		if errors.Is(err, target) {
			return true
		}
	}
	return false
}

// evidenceExportOptions are the flags of `readproof evidence export`.
type evidenceExportOptions struct {
	Key         string // the signing key for --sign ("" for the configured one)
	Sign        bool   // wrap the statement in a DSSE envelope signed with the ed25519 signing key
	WithContent bool   // embed the delivered bytes (content_b64)
	Out         string // write the bundle to FILE (atomically) instead of stdout
}

// runEvidenceExport is `readproof evidence export`.
func runEvidenceExport(ctx context.Context, e *env, opts evidenceExportOptions, args []string) error {
	if opts.Key != "" && !opts.Sign {
		return usageError("evidence export: --key names the key for --sign; add --sign")
	}
	if e.json && (opts.Out == "" || opts.Out == "-") {
		// stdout carries one JSON document: the summary, or the bundle,
		// not both (docs/json.md says why the summary wins)
		return withCode(ExitUsage, hint.With(errors.New("evidence export: --json prints a summary of the export on stdout, so the bundle needs a file"),
			"add --out FILE (the bundle is written there, the summary names it), or leave out --json to have the bundle itself on stdout"))
	}
	if e.json && opts.Out != "" && sameAsStdout(e.out, opts.Out) {
		return withCode(ExitUsage, hint.With(fmt.Errorf("evidence export: --out %s is stdout, where --json prints the summary", text.Printable(opts.Out)),
			"give --out a file of its own, or leave out --json to have the bundle itself on stdout"))
	}
	if opts.Out != "" {
		if fi, err := os.Stat(opts.Out); err == nil && fi.IsDir() {
			return withCode(ExitUsage, hint.With(fmt.Errorf("evidence export: --out %s is a directory", opts.Out),
				"name the file to write, such as --out "+text.ShellArg(filepath.Join(opts.Out, args[0]+".json"))))
		}
	}
	return e.withReadStoreCtx(ctx, func(s *store.Store) error {
		var key evidence.Key
		if opts.Sign {
			pol, err := s.Policy()
			if err != nil {
				return err
			}
			k, err := keyloc.LoadSigning(opts.Key, e.storePath, pol)
			if err != nil {
				return err
			}
			key = k
		}
		checkKeys, keyWarnings, err := exportCheckKeys(e, s, args[0])
		if err != nil {
			return err
		}
		line := progress.Start(e.err, "evidence export", "entries", e.json)
		var data []byte
		var st *evidence.Statement
		var checks []evidence.Check
		err = interruptible(ctx, func() error {
			var err error
			data, st, checks, err = s.ExportEvidenceChecked(args[0], store.EvidenceOptions{WithContent: opts.WithContent, ExporterVersion: buildinfo.Read().Version,
				Context: ctx, Progress: line.Update}, checkKeys)
			if err != nil {
				return err
			}
			if opts.Sign {
				data, err = key.SignEnvelope(data)
			}
			return err
		})
		line.Stop()
		if errors.Is(err, store.ErrCouldNotRead) {
			// the replay could not read the store: nothing learnt
			if e.json {
				if jerr := printJSON(e.out, exportStopJSON(args[0], nil, nil, err)); jerr != nil {
					return jerr
				}
			}
			return withCode(ExitCannotCheck, err)
		}
		if err != nil {
			return err
		}
		outcome, err := store.ExportOutcomeOf(args[0], st, checks, keyWarnings)
		if stop := store.IsExportStopped(err); stop != nil {
			if e.json {
				if jerr := printJSON(e.out, exportStopJSON(args[0], st, stop, stop.Err)); jerr != nil {
					return jerr
				}
			}
			return stoppedExport(e, stop)
		}
		if err != nil {
			return err
		}
		sayExportOutcome(e, outcome)
		out := opts.Out
		if out == "" || out == "-" {
			_, err := e.out.Write(data)
			return err
		}
		if ctx.Err() != nil {
			return interrupted(ctx)
		}
		if err := writeOut(ctx, out, data); err != nil {
			return err
		}
		p := st.Predicate
		signed := ""
		if opts.Sign {
			signed = ", signed by " + key.Fingerprint()
		}
		name, recorded := store.NamedRun(args[0], p.RunID)
		if recorded != "" {
			recorded = "recorded as " + recorded + "; "
		}
		e.say("readproof: wrote evidence for run %s (%smanifest %s, %s, merkle root %s%s) to %s",
			name, recorded, p.ManifestID, text.Count(len(p.Entries), "entry", "entries"), p.Merkle.Root, signed, out)
		if !e.json {
			return nil
		}
		sum := sha256.Sum256(data)
		j := exportJSON{OK: true, Target: args[0], RunID: p.RunID, ManifestID: p.ManifestID, MerkleRoot: p.Merkle.Root, Entries: len(p.Entries),
			WithContent: opts.WithContent, Signed: opts.Sign, Out: out, BundleBytes: len(data), BundleSHA256: hex.EncodeToString(sum[:]),
			ReplayAllMatch: p.Replay != nil && p.Replay.AllMatch, Warnings: outcome.AllWarnings()}
		if abs, err := filepath.Abs(out); err == nil {
			j.Out = abs
		}
		if opts.Sign {
			j.Signer = key.Fingerprint()
		}
		return printJSON(e.out, j)
	})
}

// sameAsStdout reports whether path names the file stdout (out) writes to
// (/dev/stdout, /dev/fd/1, or the file stdout was redirected to), and is
// not the null device: a sink keeps no stream that the bundle and the
// summary could both be written into (`--json --out /dev/null >/dev/null`
// writes both to nothing, as asked).
func sameAsStdout(out io.Writer, path string) bool {
	for {
		o, ok := out.(*outWriter)
		if !ok {
			break
		}
		out = o.w
	}
	f, ok := out.(*os.File)
	if !ok {
		return false
	}
	a, err := f.Stat()
	if err != nil {
		return false
	}
	b, err := os.Stat(path)
	if err != nil || !os.SameFile(a, b) {
		return false
	}
	null, err := os.Stat(os.DevNull)
	return err != nil || !os.SameFile(b, null)
}

// exportJSON is the --json summary of an `evidence export` that wrote its
// bundle (docs/json.md): the names the MCP export tool's result gives the
// same facts (mcpserver.EvidenceOutput), and where the bundle went.
type exportJSON struct {
	OK             bool   `json:"ok"`
	Target         string `json:"target"`
	RunID          string `json:"run_id"`
	ManifestID     string `json:"manifest_id"`
	MerkleRoot     string `json:"merkle_root"`
	Entries        int    `json:"entries"`
	WithContent    bool   `json:"with_content"`
	Signed         bool   `json:"signed"`
	Signer         string `json:"signer,omitempty"`
	Out            string `json:"out"`
	BundleBytes    int    `json:"bundle_bytes"`
	BundleSHA256   string `json:"bundle_sha256"`
	ReplayAllMatch bool   `json:"replay_all_match"`
	// Warnings are store.ExportOutcome.AllWarnings: what stderr warns of
	// beside the bundle, in the MCP tool's order and texts (a key's
	// warning in the command's own, which names the file).
	Warnings []string `json:"warnings,omitempty"`
}

// exportStopJSON is the --json object of an `evidence export` that a store
// check stopped (stop, with st the statement it built), or whose replay
// could not read the store (stop and st nil; err a
// *store.ExportReplayUnread once the manifest was read): err and its hint
// as stderr says them (errorLines), the run and manifest when known, and
// the checks that stop it, the one err names first.
func exportStopJSON(target string, st *evidence.Statement, stop *store.ExportStopped, err error) exportStopped {
	j := exportStopped{Target: target, Stopped: store.KindCouldNotRead, Checks: []checkJSON{}}
	j.Error, j.Hint = errorLines(err)
	if st != nil {
		j.RunID, j.ManifestID = st.Predicate.RunID, st.Predicate.ManifestID
	} else if u := store.IsExportReplayUnread(err); u != nil {
		j.RunID, j.ManifestID = u.RunID, u.ManifestID
	}
	if stop == nil {
		return j
	}
	if !stop.CouldNotRead {
		j.Stopped = "refused"
	}
	for _, c := range append([]evidence.Check{stop.First}, stop.More...) {
		j.Checks = append(j.Checks, checkJSONOf(c))
	}
	return j
}

// exportStopped is the --json shape of a stopped `evidence export`.
type exportStopped struct {
	OK         bool        `json:"ok"`
	Target     string      `json:"target"`
	RunID      string      `json:"run_id,omitempty"`
	ManifestID string      `json:"manifest_id,omitempty"`
	Stopped    string      `json:"stopped"`
	Error      string      `json:"error"`
	Hint       string      `json:"hint"`
	Checks     []checkJSON `json:"checks"`
}

// exportCheckKeys loads what the store checks of an export of target
// trust, as `evidence verify` does: [signing] allowed_signers for the
// manifest commit's signature, the receipts key, the probe key. A key that
// is configured but cannot be loaded leaves its check to validity (the
// signature) or unchecked (the MACs), with a warning: export still writes
// what it can prove. The receipts key is the exception, as in verify: one
// that READPROOF_RECEIPTS_KEY or [receipts] key names and that cannot be
// loaded fails the export, exit 4, before anything is written (before
// session 30 it warned and wrote a bundle whose receipts were never
// checked, which verify with the same setting refuses to judge); one found
// only at the default location warns, as verify does.
func exportCheckKeys(e *env, s *store.Store, target string) (store.EvidenceCheckKeys, []store.ExportKeyWarning, error) {
	var keys store.EvidenceCheckKeys
	var warnings []store.ExportKeyWarning
	pol, err := s.Policy()
	if err != nil {
		return keys, nil, err
	}
	if _, signers, _, err := loadTrust(pol.AllowedSigners, time.Now()); err != nil {
		warnings = append(warnings, store.ExportKeyWarning{Check: store.CheckCommitSignature, Text: "[signing] allowed_signers cannot be read, so the manifest commit's signer was not checked against it (only that the signature is valid): " + err.Error(),
			Hint: "the bundle is written; fix the file [signing] allowed_signers names in readproof.toml (`readproof key show --format allowed-signers` prints a key's line), then export again to have the signer checked"})
	} else {
		keys.Signers = signers
	}
	if k, found, err := loadReceiptsKey(e, pol); err != nil {
		if !found {
			return keys, nil, withCode(ExitCannotCheck, receiptsKeyUnloadable(target, pol, err))
		}
		warnings = append(warnings, store.ExportKeyWarning{Check: store.CheckReceipts, Text: "the receipts key cannot be loaded, so the receipts' MACs were not checked: " + err.Error(),
			Hint: "the bundle is written; make the key at the default location readable (the key that issued the receipts: a new one cannot check them), then export again to have the MACs checked"})
	} else {
		keys.ReceiptsKey, keys.ReceiptsKeyFound = k, found
	}
	var keyWarn error
	keys.ProbeKeys, _, keyWarn = proofread.CheckKeys(s)
	if keyWarn != nil {
		warnings = append(warnings, store.ExportKeyWarning{Check: store.CheckProofOfRead, Text: proofread.NotCheckedWarning(keyWarn),
			Hint: "the bundle is written; make the probe key file the warning names readable (the key that wrote the verdicts: a new one cannot check them), then export again to have the verdict record's MACs checked"})
	}
	return keys, warnings, nil
}

// receiptsKeyUnloadable is the error of an export of target stopped
// because the receipts key READPROOF_RECEIPTS_KEY or [receipts] key names
// (in pol) cannot be loaded (err): it names the key's file and ends in a
// hint that says nothing was written. The loader's own remedy for a key
// that is there (chmod 600, move the key out of the store) is kept; for a
// missing one it would say to create a key, which cannot check receipts
// issued under another.
func receiptsKeyUnloadable(target string, pol *policy.File, err error) error {
	named := ""
	if path, from, perr := keyloc.ReceiptsPath("", pol); perr == nil && !strings.Contains(err.Error(), path) {
		named = fmt.Sprintf(" (key file %s, from %s)", path, from)
	}
	remedy := "point $" + keyloc.ReceiptsKeyEnv + " or [receipts] key at the key that issued the receipts, readable (a new key cannot check them)"
	if h := hint.Of(err); h != "" && (errors.Is(err, receipts.ErrKeyInsecure) || errors.Is(err, receipts.ErrKeyPath)) {
		remedy = h // the key is there: the loader says what to change
	}
	return hint.With(fmt.Errorf("evidence export %s: the configured receipts key cannot be loaded, so the receipts' MACs cannot be checked: %w%s", text.Escape(target), err, named),
		"nothing was written (export checks the receipts' MACs with the key configured before it writes a bundle): "+remedy+", then export again")
}

// sayExportOutcome says on stderr what an export warns of beside the
// bundle it writes (o), each line escaped as the error line is (a check's
// detail may quote an error that names a path of the store).
func sayExportOutcome(e *env, o store.ExportOutcome) {
	for _, w := range o.Keys {
		e.say("readproof: warning: %s", text.Escape(w.Text))
		e.say("readproof: hint: %s", text.Escape(w.Hint))
	}
	for _, w := range o.Warnings {
		e.say("readproof: warning: %s", text.Escape(w))
	}
	for _, h := range o.Hints {
		e.say("readproof: hint: %s", text.Escape(h))
	}
	if o.Replay != "" {
		// an honest record, and a bundle that will not verify: say so
		// while the store can still be repaired
		e.say("readproof: warning: %s", text.Escape(o.Replay))
		e.say("readproof: hint: %s", text.Escape(o.ReplayHint))
	}
}

// stoppedExport fails an export that a store check stops (stop): the
// stopping checks after the first are said on stderr, escaped as the
// error line is (a check's detail may quote an error that names a path of
// the store), the first is the error, nothing is written; exit 3 for a
// refused record, 4 for a store it could not read.
func stoppedExport(e *env, stop *store.ExportStopped) error {
	for _, f := range stop.Further() {
		e.say("readproof: %s", text.Escape(f))
	}
	if stop.CouldNotRead {
		// not a forged record: one the store would not let us read
		return withCode(ExitCannotCheck, stop.Err)
	}
	return withCode(ExitMismatch, stop.Err)
}

// verifyCommitOptions are the flags of `readproof verify-commit`.
type verifyCommitOptions struct {
	AllowedSigners string // the allowed_signers file (default: [signing] allowed_signers)
}

// runVerifyCommit is `readproof verify-commit`.
func runVerifyCommit(_ context.Context, e *env, opts verifyCommitOptions, args []string) error {
	open := func() (*store.Store, error) {
		s, err := e.openRead()
		var ee *exitError
		if err != nil && !errors.As(err, &ee) {
			// no store to check the commits against: the check could not
			// run (exit 4), as verify and evidence verify say it
			err = withCode(ExitCannotCheck, err)
		}
		return s, err
	}
	return e.bufferedOut(func() error {
		return withOpened(context.Background(), open, func(s *store.Store) error {
			path := opts.AllowedSigners
			if path == "" {
				pol, err := s.Policy()
				if err != nil {
					return err
				}
				path = pol.AllowedSigners
			}
			if path == "" {
				return withCode(ExitUsage, hint.With(errors.New("verify-commit: no allowed_signers file"), "pass --allowed-signers FILE or set [signing] allowed_signers in readproof.toml (`readproof key show --format allowed-signers` prints the line for a key)"))
			}
			data, err := readKeysFile(path)
			if err != nil {
				return withCode(ExitUsage, hint.With(fmt.Errorf("read allowed signers %s: %w", path, err), "readproof key show --format allowed-signers prints a line for your key"))
			}
			signers, err := evidence.ParseAllowedSigners(data)
			if err != nil {
				return withCode(ExitUsage, hint.With(fmt.Errorf("%s: %w", path, err), "see ssh-keygen(1), ALLOWED SIGNERS"))
			}
			var results []any
			bad := 0
			for _, target := range args {
				sig, err := s.VerifyManifestSignature(target, signers)
				if err != nil && !isSignatureError(err) {
					return err
				}
				if e.json {
					if err != nil {
						results = append(results, map[string]any{"target": target, "ok": false, "error": err.Error()})
					} else {
						results = append(results, map[string]any{"target": target, "ok": true, "signature": sig})
					}
				} else if err != nil {
					fmt.Fprintf(e.out, "BAD %v\n", err)
				} else {
					fmt.Fprintf(e.out, "good signature on manifest %s (run %s) by %s with ED25519 key %s\n", sig.ManifestID, sig.RunID, sig.Principal, sig.Fingerprint)
				}
				if err != nil {
					bad++
				}
			}
			if e.json {
				if err := printJSON(e.out, results); err != nil {
					return err
				}
			}
			if bad > 0 {
				return withCode(ExitMismatch, hint.With(fmt.Errorf("%d of %d manifest commit signatures do not verify", bad, len(args)),
					"the BAD lines on stdout say why (--json: each target's error); a commit made before [signing] key was set is unsigned"))
			}
			return nil
		})
	})
}

// evidenceVerifyOptions are the flags of `readproof evidence verify`.
type evidenceVerifyOptions struct {
	TrustedKeys      string // public keys to trust (allowed_signers, authorized_keys or PKIX PEM; default: ...
	Offline          bool   // check the file alone: skip the store checks
	RequireSignature bool   // fail a bundle that is not a DSSE envelope signed by a trusted key
}

// runEvidenceVerify is `readproof evidence verify`.
func runEvidenceVerify(ctx context.Context, e *env, opts evidenceVerifyOptions, args []string) error {
	// readproof.toml is parsed while the bundle is read (both are needed;
	// the bundle's error, if any, is reported first, as before)
	type loaded struct {
		pol *policy.File
		err error
	}
	polc := make(chan loaded, 1)
	go func() {
		pol, err := e.loadPolicy()
		polc <- loaded{pol, err}
	}()
	data, err := readBundle(e.in, args[0])
	l := <-polc
	if err != nil {
		return err
	}
	pol, err := l.pol, l.err
	if err != nil {
		return err
	}
	trustPath := opts.TrustedKeys
	if trustPath == "" {
		trustPath = pol.AllowedSigners
	}
	keys, signers, trustWarnings, err := loadTrust(trustPath, time.Now())
	if err != nil {
		return err
	}
	offline := opts.Offline
	var rep evidence.Report
	var keyWarn error         // a probe key file that is there but unusable
	var receiptsKeyWarn error // a receipts key at the default location that is unusable
	if offline {
		rep, err = evidence.Verify(data, evidence.VerifyOptions{Offline: true, TrustedKeys: keys, RequireSignature: opts.RequireSignature})
	} else {
		s, oerr := e.openWith(pol)
		if oerr != nil {
			if errors.Is(oerr, store.ErrNotInitialized) {
				if !e.storeNamed {
					if h := copyHint(filepath.Dir(e.storePath)); h != "" {
						return withCode(ExitCannotCheck, hint.With(oerr, h+", or check the file alone with --offline"))
					}
				}
				return withCode(ExitCannotCheck, hint.With(oerr, "point --store at the store or a clone of it (git clone works), or check the file alone with --offline"))
			}
			return withCode(ExitCannotCheck, oerr)
		}
		// left open when interrupted: the abandoned check may still read it
		defer func() {
			if ctx.Err() == nil {
				s.Close()
			}
		}()
		line := progress.Start(e.err, "evidence verify", "entries", e.json)
		opts := store.EvidenceVerifyOptions{TrustedKeys: keys, Signers: signers, RequireSignature: opts.RequireSignature, Context: ctx, Progress: line.Update}
		// the verdict record's MAC is checked when the key is at hand
		opts.ProbeKeys, _, keyWarn = proofread.CheckKeys(s)
		if opts.ReceiptsKey, opts.ReceiptsKeyFound, err = loadReceiptsKey(e, pol); err != nil {
			if !opts.ReceiptsKeyFound {
				return withCode(ExitCannotCheck, err)
			}
			// a key no setting names, which did not load: the receipts
			// are checked as without a key, and the user told so
			receiptsKeyWarn, opts.ReceiptsKey = err, nil
		}
		ierr := interruptible(ctx, func() error {
			rep, err = s.VerifyEvidence(data, opts)
			return nil
		})
		line.Stop()
		if ierr != nil {
			return ierr
		}
	}
	if err != nil {
		return withCode(ExitCannotCheck, err)
	}
	var warnings []string
	for _, w := range trustWarnings {
		warnings = append(warnings, w)
		e.say("readproof: warning: %s", w)
	}
	for _, c := range rep.Checks {
		if c.Name == store.CheckJournal && c.Kind == store.KindJournalUnchecked {
			// the bounded walk stopped first: say what was not checked
			warnings = append(warnings, "store check journal: "+c.Detail)
			e.say("readproof: warning: %s", warnings[len(warnings)-1])
		}
	}
	if receiptsKeyWarn != nil && hasCheck(rep, store.CheckReceipts) {
		warnings = append(warnings, "receipt MACs not checked: "+receiptsKeyWarn.Error())
		e.say("readproof: warning: %s", text.Escape(warnings[len(warnings)-1]))
	}
	if keyWarn != nil && hasCheck(rep, store.CheckProofOfRead) {
		warnings = append(warnings, proofread.NotCheckedWarning(keyWarn))
		e.say("readproof: warning: %s", warnings[len(warnings)-1])
	}
	if offline && rep.OK() && rep.Statement != nil {
		// the additions are checked against the store only: an auditor
		// reading them in a bundle verified offline is told so
		var carried []string
		if len(rep.Statement.Predicate.ProofOfRead) > 0 {
			carried = append(carried, "proof-of-read verdicts")
		}
		if len(rep.Statement.Predicate.Receipts) > 0 {
			carried = append(carried, "a tool receipt summary")
		}
		if len(carried) > 0 {
			warnings = append(warnings, bundleName(args[0])+" carries "+strings.Join(carried, " and ")+", which --offline does not check (the store check does)")
			e.say("readproof: warning: %s", warnings[len(warnings)-1])
		}
	}
	if trustPath != "" && !rep.Signed && rep.OK() {
		// the summary of a plain statement says nothing of signatures; an
		// auditor who gave keys (--trusted-keys, or [signing]
		// allowed_signers) is told none was checked
		what := "no signature was checked against the trusted keys"
		if commitSignerChecked(rep) {
			what = "the manifest commit's signature was checked against the trusted keys, the bundle's own was not"
		}
		warnings = append(warnings, bundleName(args[0])+" is a plain statement, not a signed envelope: "+what+" (--require-signature fails it)")
		e.say("readproof: warning: %s", warnings[len(warnings)-1])
	}
	if e.json {
		j := verifyJSON{Warnings: warnings, OK: rep.OK(), ManifestID: rep.ManifestID, RunID: rep.RunID, Entries: rep.Entries, Root: rep.Root, Signer: rep.Signer, Offline: offline, Checks: []checkJSON{}}
		for _, c := range rep.Checks {
			j.Checks = append(j.Checks, checkJSONOf(c))
		}
		if j.OK {
			j.Summary = verifySummary(rep)
		}
		if err := printJSON(e.out, j); err != nil {
			return err
		}
	} else if rep.OK() {
		fmt.Fprintln(e.out, verifySummary(rep))
	} else {
		fmt.Fprint(e.out, rep.Listing())
	}
	if !rep.OK() {
		// the error names the bundle, as an error names its input (before
		// session 29's re-read it said only "evidence verification
		// failed: N of M checks failed", which names no file in a script
		// that verifies several)
		err := fmt.Errorf("%s: %w", bundleSubject(args[0]), rep.Err())
		if h := couldNotReadHint(rep); h != "" {
			return withCode(ExitCannotCheck, hint.With(err, h))
		}
		return withCode(ExitMismatch, hint.With(err, verifyHint(rep, len(keys) > 0 || len(trustWarnings) > 0)))
	}
	return nil
}

// bundleSubject names a bundle at the head of an error: "bundle FILE", or
// "the bundle on stdin" for "-".
func bundleSubject(file string) string {
	if file == "-" {
		return bundleName(file)
	}
	return "bundle " + bundleName(file)
}

// couldNotReadHint is the hint of a verification whose every failed check
// is a read the store refused (store.KindCouldNotRead, or a replay's error
// that store.CouldNotRead): nothing was learnt of the record, so it is
// neither damaged nor forged as far as this run knows (exit 4, not 3). ""
// when a check failed on what it read.
func couldNotReadHint(rep evidence.Report) string {
	failed := rep.Failed()
	perm, notRegular := false, false
	for _, c := range failed {
		if c.Kind != store.KindCouldNotRead && (c.Err == nil || !store.CouldNotRead(c.Err)) {
			return ""
		}
		perm = perm || errors.Is(c.Err, fs.ErrPermission)
		notRegular = notRegular || gitstore.ObjectNotRegular(c.Err)
	}
	if len(failed) == 0 {
		return ""
	}
	if perm {
		return "the store could not be read, which says nothing of the bundle or the record: let the user running readproof read every file of the store (`ls -l` of the path above shows its owner and mode), then verify again"
	}
	if notRegular {
		// a socket, a FIFO or a device where an object's file should be:
		// not a failing file system
		return "the store could not be read, which says nothing of the bundle or the record: a file of the store is not a regular file (`ls -l` of the path above shows what stands there); remove it and restore the object's file from a clone or a backup, or verify against a clone of the store, then verify again"
	}
	return "the store could not be read, which says nothing of the bundle or the record: the file system failed (dmesg may say why); repair it or verify against a clone of the store, then verify again"
}
