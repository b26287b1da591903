package gitstore

import (
	"bufio"
	"crypto/rand"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
	"unsafe"
)

// mappedRSS is the resident size, in KiB, of the mapping that starts at
// data[0], from /proc/self/smaps.
func mappedRSS(t *testing.T, data []byte) int {
	t.Helper()
	f, err := os.Open("/proc/self/smaps")
	if err != nil {
		t.Skip(err)
	}
	defer f.Close()
	start := fmt.Sprintf("%x-", uintptr(unsafe.Pointer(&data[0])))
	in := false
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		if !strings.Contains(line, ":") || strings.Contains(strings.Fields(line)[0], "-") {
			in = strings.HasPrefix(line, start)
			continue
		}
		if in && strings.HasPrefix(line, "Rss:") {
			kb, err := strconv.Atoi(strings.Fields(line)[1])
			if err != nil {
				t.Fatal(err)
			}
			return kb
		}
	}
	t.Skipf("no mapping at %s in /proc/self/smaps: this filesystem cannot map, so the file was read", start)
	return 0
}

// TestMapFileOnceTrims: a file mapped with mapFile and read whole stays
// resident whole; mapped with mapFileOnce (the copy's pack over
// trimPackOver, as it is indexed) it is dropped from the resident set
// within a few periods, and reads back the same bytes after.
func TestMapFileOnceTrims(t *testing.T) {
	t.Parallel()
	const size = 8 << 20
	want := make([]byte, size)
	rand.Read(want)
	p := filepath.Join(t.TempDir(), "pack")
	if err := os.WriteFile(p, want, 0o600); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(p)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	readAll := func(data []byte) (sum byte) {
		for i := 0; i < len(data); i += 4096 {
			sum += data[i]
		}
		return sum
	}

	data, release, err := mapFile(f, size)
	if err != nil {
		t.Fatal(err)
	}
	sum := readAll(data)
	if kb := mappedRSS(t, data); kb < size>>10 {
		t.Fatalf("mapFile, read whole: %d KiB resident, want all %d: the measure does not see it", kb, size>>10)
	}
	release()

	data, release, err = mapFileOnce(f, size, time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	defer release()
	if readAll(data) != sum {
		t.Fatal("the two mappings read differently")
	}
	kb := mappedRSS(t, data)
	for deadline := time.Now().Add(5 * time.Second); kb > size>>12 && time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
		kb = mappedRSS(t, data)
	}
	if kb > size>>12 {
		t.Errorf("mapFileOnce, read whole: %d KiB resident after 5 s, want at most a quarter of %d", kb, size>>10)
	}
	if string(data) != string(want) {
		t.Error("mapFileOnce: the bytes read after trimming differ from the file's")
	}
}
