package main

import (
	"os"
	"regexp"
	"strings"

	"github.com/rogpeppe/go-internal/testscript"
)

// jsonNormCmd writes FILE (stdout, stderr or a file) to OUT with what
// varies from one run to the next replaced by a placeholder, for a `cmp`
// against a golden file: `jsonnorm [-num KEY]... [-sha256 KEY]... FILE OUT`. Object ids (40
// hex digits) become <oid>, UTC RFC 3339 times <time> (whole seconds) or
// <time.frac> (with a fraction of a second), $WORK's path $WORK,
// and each "KEY": whose value is a whole number gets <n> (a value of
// another type stays, and fails the comparison), and each "KEY": whose
// value is 64 lowercase hex digits (a digest of what varies) <sha256>.
func jsonNormCmd(ts *testscript.TestScript, neg bool, args []string) {
	var keys, digests []string
	for len(args) >= 2 && (args[0] == "-num" || args[0] == "-sha256") {
		if args[0] == "-num" {
			keys = append(keys, args[1])
		} else {
			digests = append(digests, args[1])
		}
		args = args[2:]
	}
	if neg || len(args) != 2 {
		ts.Fatalf("usage: jsonnorm [-num KEY]... [-sha256 KEY]... FILE OUT")
	}
	// a git object id
	oid := regexp.MustCompile(`\b[0-9a-f]{40}\b`)
	// a time in RFC 3339, UTC only: a time with an offset stays as it
	// was and fails the comparison. Whole seconds (a time read back from
	// a commit) and a fraction (the clock's) are told apart, as
	// docs/json.md tells them apart
	utc := regexp.MustCompile(`\b[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}Z`)
	frac := regexp.MustCompile(`\b[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}\.[0-9]+Z`)
	text := ts.ReadFile(args[0])
	text = strings.ReplaceAll(text, ts.Getenv("WORK"), "$WORK")
	text = oid.ReplaceAllString(text, "<oid>")
	text = utc.ReplaceAllString(text, "<time>")
	text = frac.ReplaceAllString(text, "<time.frac>")
	for _, k := range keys {
		re := regexp.MustCompile(`(?m)("` + regexp.QuoteMeta(k) + `": )[0-9]+(,?)$`)
		text = re.ReplaceAllString(text, `${1}<n>${2}`)
	}
	for _, k := range digests {
		re := regexp.MustCompile(`(?m)("` + regexp.QuoteMeta(k) + `": )"[0-9a-f]{64}"(,?)$`)
		text = re.ReplaceAllString(text, `${1}"<sha256>"${2}`)
	}
	ts.Check(os.WriteFile(ts.MkAbs(args[1]), []byte(text), 0o644))
}
