package commands

// `readproof receipts verify-claims`.

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"strings"
	"text/tabwriter"

	"github.com/urfave/cli/v2"

	"github.com/readproof/readproof/internal/hint"
	"github.com/readproof/readproof/internal/text"
	"github.com/readproof/readproof/receipts"
)

// Claims ---------------------------------------------------------------------

func receiptsVerifyClaims(c *cli.Context) error {
	if err := needArgs(c, 1, 1, "--session S [--strict] CLAIMS  (CLAIMS: a file, or - for stdin)"); err != nil {
		return err
	}
	opts := receiptsVerifyClaimsOptions{Session: c.String("session"), Key: c.String("key"), Strict: c.Bool("strict")}
	return withEnv(c, func(e *env) error { return runReceiptsVerifyClaims(c.Context, e, opts, c.Args().Slice()) })
}

func printClaims(w io.Writer, rep receipts.Report, strict bool) {
	fmt.Fprintf(w, "session %s, key %s: %s: %d valid, %d fabricated, %d tampered, %d other session, %d unknown key; %d omitted\n",
		rep.Session, rep.KeyID, text.Count(len(rep.Claims), "claim", "claims"), rep.Count(receipts.Valid), rep.Count(receipts.Fabricated),
		rep.Count(receipts.Tampered), rep.Count(receipts.OtherSession), rep.Count(receipts.UnknownKey), len(rep.Omitted))
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	line := func(cr receipts.ClaimResult) {
		tool := "-"
		if cr.Receipt != nil {
			tool = receiptText(cr.Receipt.Tool)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", cr.Verdict, receiptText(cr.ID), tool, strings.ReplaceAll(cr.Detail, "\n", " "))
	}
	if len(rep.Claims) > 0 {
		fmt.Fprintln(tw, "\nVERDICT\tCLAIM\tTOOL\tDETAIL")
		for _, cr := range rep.Claims {
			line(cr)
		}
	}
	if len(rep.Omitted) > 0 {
		fmt.Fprintln(tw, "\nVERDICT\tOMITTED\tTOOL\tDETAIL")
		for _, cr := range rep.Omitted {
			line(cr)
		}
	}
	_ = tw.Flush()
	switch {
	case rep.Strict() && strict:
		fmt.Fprintln(w, "\nstrict: FAIL (a claim is fabricated, tampered, of another session or under an unknown key)")
	case rep.Strict():
		fmt.Fprintln(w, "\nreport only: --strict would fail (a claim is fabricated, tampered, of another session or under an unknown key)")
	case strict:
		fmt.Fprintln(w, "\nstrict: pass")
	default:
		fmt.Fprintln(w, "\nreport only: --strict would pass")
	}
}

// receiptsVerifyClaimsOptions are the flags of `readproof receipts verify-claims`.
type receiptsVerifyClaimsOptions struct {
	Session string // the receipt session the claims are judged against
	Key     string // the receipts key file ("" for the configured one)
	Strict  bool   // exit 3 when a claim is fabricated, tampered, of another session or under an unknown key
}

// runReceiptsVerifyClaims is `readproof receipts verify-claims`.
func runReceiptsVerifyClaims(_ context.Context, e *env, opts receiptsVerifyClaimsOptions, args []string) error {
	session, err := receiptSession("receipts verify-claims", opts.Session)
	if err != nil {
		return err
	}
	data, err := readReceiptInput(e.in, "claims", args[0], receipts.MaxClaimsInput)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return withCode(ExitUsage, err)
		}
		return err
	}
	claims, err := receipts.ParseClaims(data)
	if err != nil {
		return withCode(ExitUsage, hint.With(err, `give a JSON list of receipt ids, {"receipts": [...]}, or free text citing rcpt_ ids`))
	}
	return e.withReceipts(opts.Key, false, func(rc *receiptsCtx) error {
		if rc.keyErr != nil {
			return withCode(ExitCannotCheck, rc.keyErr)
		}
		rep, err := receipts.VerifyClaims(rc.ledger, rc.key, session, claims)
		if err != nil {
			return err
		}
		if rc.json {
			if err := printJSON(rc.out, rep.JSON()); err != nil {
				return err
			}
		} else {
			printClaims(rc.out, rep, opts.Strict)
		}
		if opts.Strict && rep.Strict() {
			n := 0 // the claims that fail it (Verdict.FailsStrict)
			for _, c := range rep.Claims {
				if c.Verdict.FailsStrict() {
					n++
				}
			}
			detail := fmt.Sprintf("%d fabricated, %d tampered, %d unknown key", rep.Count(receipts.Fabricated), rep.Count(receipts.Tampered), rep.Count(receipts.UnknownKey))
			if o := rep.Count(receipts.OtherSession); o > 0 {
				// said only when it counts: the line keeps its shape
				// for the failures it named before session 30
				detail += fmt.Sprintf(", %d other session", o)
			}
			return withCode(ExitMismatch, hint.With(
				fmt.Errorf("claims of session %s: %d of %s fail --strict (%s)",
					session, n, text.Count(len(rep.Claims), "claim", "claims"), detail),
				"every cited receipt id must be one this store issued for a real call of session "+session+", unaltered, under the key supplied; a call of another session (the report names it) is not evidence of this one's work: cite it where that session is judged"))
		}
		return nil
	})
}
