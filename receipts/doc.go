// Package receipts issues, stores and checks tool receipts: HMAC-SHA256
// proofs that a brokered tool call (a command run through [Exec], or any
// call an orchestrator reports through [Issuer.Issue]) really ran, with which
// arguments, producing which result, when. Receipts are appended to the
// evidence store ([Ledger]) as they are issued, so every process and every
// clone sees them; [VerifyClaims] classifies the receipt ids an agent cites as
// valid, fabricated, tampered, from another session or under an unknown key,
// and lists the receipts it left out. The format, the MAC encoding byte by
// byte and the test vectors are specified in docs/receipts.md.
//
// The package owns the receipt format, key files (0600, outside every
// repository), the refs under refs/heads/readproof/receipts/ and the claims
// report. It talks to git only through the gitobj.Store interface (a
// gitstore.Store is one) and must not import gitstore or go-git, nor any
// command, evidence or manifest package: those build on it.
//
// Example:
//
//	key, err := receipts.LoadKey(keyPath, storeDir)
//	issuer := receipts.NewIssuer(key, receipts.NewLedger(store))
//	res, _ := receipts.Exec(ctx, receipts.ExecOptions{Argv: argv, Stdout: os.Stdout, Stderr: os.Stderr})
//	r, err := issuer.Issue(context.WithoutCancel(ctx), receipts.CommandCall("s1", "", argv, res))
//	report, err := receipts.VerifyClaims(ledger, key, "s1", claims)
package receipts
