package gitstore

import (
	"os"
	"time"
)

// helperFetchView makes a fetch view of the store at path, prints its
// directory and waits to be killed (a pull killed while it fetches).
func helperFetchView(path string) error {
	tr, err := NewTransport(path, TransportOptions{})
	if err != nil {
		return err
	}
	view, _, _, err := tr.fetchView()
	if err != nil {
		return err
	}
	if _, err := os.Stdout.WriteString(view.dir + "\n"); err != nil {
		return err
	}
	time.Sleep(time.Minute)
	return nil
}
