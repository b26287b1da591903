//go:build !unix

package gitstore

import "os"

// sshConfigPermErr is nil here: OpenSSH's owner and mode check of an ssh
// configuration is a unix one.
func sshConfigPermErr(os.FileInfo) error { return nil }
