package testproc

import (
	"bytes"
	"compress/zlib"
	"fmt"
	"io"
	"os"
	"path/filepath"
)

// DamageLoose flips one byte of the loose object oid of the git directory
// gitDir in place, as a disk error or an attacker would: the byte before
// the last of its inflated form (the content's, for any object longer than
// one byte), compressed again under the same name. The file is left mode
// 0644 (git writes 0444). The object must be a loose file: a test whose
// objects are in a pack unpacks them first (gitstore.UnpackForTest).
func DamageLoose(gitDir, oid string) error {
	if len(oid) < 3 {
		return fmt.Errorf("damage loose object %q: not an object id", oid)
	}
	path := filepath.Join(gitDir, "objects", oid[:2], oid[2:])
	raw, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	zr, err := zlib.NewReader(bytes.NewReader(raw))
	if err != nil {
		return fmt.Errorf("damage loose object %s: %w", oid, err)
	}
	data, err := io.ReadAll(zr)
	if err != nil {
		return fmt.Errorf("damage loose object %s: %w", oid, err)
	}
	if len(data) < 2 {
		return fmt.Errorf("damage loose object %s: %d bytes inflated, too few to damage", oid, len(data))
	}
	data[len(data)-2] ^= 0x01
	var buf bytes.Buffer
	zw := zlib.NewWriter(&buf)
	if _, err := zw.Write(data); err != nil {
		return err
	}
	if err := zw.Close(); err != nil {
		return err
	}
	if err := os.Chmod(path, 0o644); err != nil {
		return err
	}
	return os.WriteFile(path, buf.Bytes(), 0o644)
}
