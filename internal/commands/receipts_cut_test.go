package commands

import (
	"errors"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/readproof/readproof/internal/hint"
)

// fullAfter is a stdout that takes n bytes and then fails every write
// with ENOSPC, as /dev/full or a device that fills up does.
type fullAfter struct{ n, got int }

func (f *fullAfter) Write(p []byte) (int, error) {
	if f.got+len(p) > f.n {
		k := f.n - f.got
		f.got = f.n
		return k, syscall.ENOSPC
	}
	f.got += len(p)
	return len(p), nil
}

// TestStreamedOutputCutFails: a `receipts list` JSON array or table whose
// stdout fails part-way fails the command with an error that says what
// was printed stops part-way (not valid JSON; receipts missing), wraps the
// write's error and carries a hint, and the rows stop being read at the
// write that failed. Before session 30 the error was the write's alone
// ("write /dev/stdout: no space left on device").
func TestStreamedOutputCutFails(t *testing.T) {
	rows := make([]receiptJSON, 2000)
	for i := range rows {
		rows[i] = receiptJSON{ID: "rcpt_" + strconv.Itoa(i), Tool: "t", Check: "valid"}
	}
	for _, limit := range []int{0, 10, 5000, 40000} {
		for name, print := range map[string]func(*fullAfter, func(func(receiptJSON) error) error) error{
			"json":  func(w *fullAfter, each func(func(receiptJSON) error) error) error { return printJSONArray(w, each) },
			"table": func(w *fullAfter, each func(func(receiptJSON) error) error) error { return writeReceiptTable(w, each) },
		} {
			w := &fullAfter{n: limit}
			given := 0
			each := func(fn func(receiptJSON) error) error {
				for _, r := range rows {
					given++
					if err := fn(r); err != nil {
						return err
					}
				}
				return nil
			}
			err := print(w, each)
			if !errors.Is(err, syscall.ENOSPC) {
				t.Fatalf("%s cut after %d bytes: %v, want ENOSPC", name, limit, err)
			}
			want := map[string]string{"json": "not valid JSON", "table": "receipts of the session are missing"}[name]
			if !strings.Contains(err.Error(), "stops part-way") || !strings.Contains(err.Error(), want) || hint.Of(err) == "" {
				t.Errorf("%s cut after %d bytes: %q (hint %q), want it to say the output stops part-way (%s), with a hint", name, limit, err, hint.Of(err), want)
			}
			// the table reads the rows once for its widths; the rows
			// after the failed write are not read again
			if passes := map[string]int{"json": 1, "table": 2}[name]; given >= passes*len(rows) {
				t.Errorf("%s cut after %d bytes: %d rows read, want fewer than %d", name, limit, given, passes*len(rows))
			}
		}
	}
}
