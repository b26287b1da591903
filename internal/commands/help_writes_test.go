package commands

import (
	"bytes"
	"io"
	"strings"
	"testing"
)

// countingWriter counts the writes that reach it.
type countingWriter struct {
	bytes.Buffer
	writes int
}

func (w *countingWriter) Write(p []byte) (int, error) {
	w.writes++
	return w.Buffer.Write(p)
}

// TestHelpIsWrittenOnce: readproof's help and `readproof help [COMMAND]`
// reach stdout in one write (urfave/cli writes a cell at a time: 213
// writes for the command list), with the same text each way.
func TestHelpIsWrittenOnce(t *testing.T) {
	var texts []string
	for _, args := range [][]string{{"readproof", "help"}, {"readproof", "--help"}, {"readproof", "-h"}, {"readproof", "help", "tag", "set"}} {
		var out countingWriter
		Main(args, strings.NewReader(""), &out, io.Discard)
		if out.writes != 1 {
			t.Errorf("%s: %d writes to stdout, want 1", strings.Join(args, " "), out.writes)
		}
		if !strings.Contains(out.String(), "USAGE:") {
			t.Errorf("%s: no help on stdout:\n%s", strings.Join(args, " "), out.String())
		}
		texts = append(texts, out.String())
	}
	if texts[0] != texts[1] || texts[1] != texts[2] {
		t.Errorf("help and --help differ:\n%s\n---\n%s", texts[0], texts[1])
	}
}
