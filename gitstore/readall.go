package gitstore

import (
	"io"
	"os"
)

// readWhole reads f to its end as os.ReadFile does: one buffer of the size
// Stat gives (plus one byte to see the end), grown only if the file grew.
func readWhole(f *os.File) ([]byte, error) {
	var size64 int64
	if info, err := f.Stat(); err == nil {
		size64 = info.Size()
	}
	return readWholeSized(f, size64)
}

// readWholeSized is readWhole of a file whose size the caller knows
// (size64: a guess; a file that grew is read to its end all the same).
func readWholeSized(f *os.File, size64 int64) ([]byte, error) {
	var size int
	if int64(int(size64)) == size64 {
		size = int(size64)
	}
	size++ // one byte for the final read at EOF
	if size < 512 {
		size = 512
	}
	data := make([]byte, 0, size)
	for {
		n, err := f.Read(data[len(data):cap(data)])
		data = data[:len(data)+n]
		if err != nil {
			if err == io.EOF {
				err = nil
			}
			return data, err
		}
		if len(data) >= cap(data) {
			d := append(data[:cap(data)], 0)
			data = d[:len(data)]
		}
	}
}

// readDirNames is the names in directory dir (unsorted), through openRead.
func readDirNames(dir string) ([]string, error) {
	f, err := openRead(dir)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return f.Readdirnames(-1)
}
