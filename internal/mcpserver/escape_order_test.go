package mcpserver

import (
	"errors"
	"fmt"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"

	"github.com/readproof/readproof/internal/hint"
	"github.com/readproof/readproof/internal/store"
)

// The texts below hide the server's paths before they are escaped, as a
// failed call's does (TestErrorTextHidesBeforeEscaping): a path after a
// tab or a no-break space is hidden, and a store whose path holds a bidi
// character is <store>. Before session 28's follow-up an export's
// warnings and the JSON-RPC errors of resources/list and resources/read
// were escaped first: the tab became the two characters \t, the path
// after them started no word and was kept whole.

func hidingClean() func(string) string {
	ps := serverPaths{{"/srv/st\u202eore", "<store>"}}
	return func(s string) string { return ps.hideOn(s, testLocal) }
}

// TestExportWarningsHideBeforeEscaping: an evidence export's warnings
// (the store checks', the replay's, the keys') and its hints.
func TestExportWarningsHideBeforeEscaping(t *testing.T) {
	outcome := store.ExportOutcome{
		Warnings: []string{"run r1: store check store_replace failed: open\t/srv/data/info/grafts: exists"},
		Hints:    []string{"remove\u00a0/srv/data/info/grafts"},
		Replay:   "run r1: replay did not match: read /srv/st\u202eore/objects/ab: short",
		Keys:     []ExportKeyWarning{{Text: "probe key\u00a0/srv/keys/probe.key: not loaded"}},
	}
	warnings, hints := exportWarnings(outcome, hidingClean())
	want := []string{`run r1: store check store_replace failed: open\tgrafts: exists`,
		"run r1: replay did not match: read <store>/objects/ab: short", `probe key\u00a0probe.key: not loaded`}
	if fmt.Sprintf("%q", warnings) != fmt.Sprintf("%q", want) {
		t.Errorf("warnings\n got %q\nwant %q", warnings, want)
	}
	if len(hints) != 1 || hints[0] != "remove\u00a0grafts" {
		t.Errorf("hints %q, want the path hidden", hints)
	}
}

// ExportKeyWarning is the store's, named here for the test's table.
type ExportKeyWarning = store.ExportKeyWarning

// TestRPCErrorsHideBeforeEscaping: the JSON-RPC errors of resources/list
// and resources/read (rpcError, and resourceError's not-found and refused).
func TestRPCErrorsHideBeforeEscaping(t *testing.T) {
	clean := hidingClean()
	cause := hint.With(errors.New("lock\t/srv/data/x.lock: exists"), "remove\u00a0/srv/data/x.lock")
	const said = `lock\tx.lock: exists (hint: remove\u00a0x.lock)`
	if got := rpcError(cause, clean).Error(); got != said {
		t.Errorf("rpcError\n got %q\nwant %q", got, said)
	}
	if got := rpcError(errors.New("open /srv/st\u202eore/refs/x.lock: exists"), clean).Error(); got != "open <store>/refs/x.lock: exists" {
		t.Errorf("rpcError of the store's path: %q", got)
	}
	for _, c := range []struct {
		err  error
		want string
	}{
		{resourceNotFound("readproof://d/x", fmt.Errorf("%w: %w", store.ErrNotRegistered, cause), clean),
			"Resource not found: not registered: resource not registered: " + said},
		{resourceRefused("readproof://d/x", cause, clean), "Resource refused: " + said},
	} {
		var we *jsonrpc.Error
		if !errors.As(c.err, &we) || we.Message != c.want {
			t.Errorf("JSON-RPC error\n got %v\nwant %q", c.err, c.want)
		}
	}
}
