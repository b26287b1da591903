//go:build !unix

package gitstore

import "os"

// openNoPoll is os.OpenFile (rawfile_unix.go says why it differs there).
func openNoPoll(name string, flag int, perm os.FileMode) (*os.File, error) {
	return os.OpenFile(name, flag, perm)
}

func fsyncPath(name string) error {
	f, err := os.Open(name)
	if err != nil {
		return err
	}
	err = f.Sync()
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

func renameFile(oldname, newname string) error { return os.Rename(oldname, newname) }

func openRead(name string) (*os.File, error) { return os.Open(name) }

// openLoose is openRead of a loose object's file; rawfile_unix.go's does
// not follow a symbolic link in its place.
func openLoose(name string) (*os.File, error) { return os.Open(name) }

// sourceOpenFlags: no O_NOFOLLOW here; openSourceFile's fstat check
// refuses what is not the file that was listed.
const sourceOpenFlags = 0

func readFile(name string) ([]byte, error) { return os.ReadFile(name) }

func readDir(name string) ([]os.DirEntry, error) { return os.ReadDir(name) }

// ownedByMe is false here: whose a repository is is left to git.
func ownedByMe(os.FileInfo) bool { return false }
