//go:build !linux

package gitstore

// plainLooseRefs is false here: listLocal walks the refs as it always did
// (transport_listlocal_linux.go has the one-walk reader).
func plainLooseRefs(string) (map[string]OID, bool) { return nil, false }
