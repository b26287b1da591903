package gitstore

import (
	"os"
	"strings"
	"syscall"
)

// plainLooseRefs reads every loose ref file under dir's refs/ in one walk,
// each opened relative to its directory (openat) and read with one fstat
// and one read, when every one of them is a plain loose ref: a regular
// file (not a symbolic link) of at most maxRefFile bytes, named as
// CheckRefName allows, that holds an object id (lock files are skipped, as
// everywhere). ok is false at the first file that is anything else (a
// symbolic ref, a link, a FIFO, a broken or oversized file, a file gone
// while read) or at any error: the caller then lists the repository as
// before (unreadableRefFile, Refs, everyLooseListed), which says what is
// wrong with it or leaves it to git. When ok, those three would have found
// nothing to refuse, listed exactly these loose refs, and found every file
// listed: a clone from a path lists its source's 2,000 loose run refs in
// one walk of about four system calls a ref instead of three walks and
// about ten.
func plainLooseRefs(dir string) (found map[string]OID, ok bool) {
	fd, err := openDirAt(atFDCWD, dir+"/refs")
	if err != nil {
		return nil, false
	}
	found = map[string]OID{}
	buf := make([]byte, maxRefFile+1)
	if !plainLooseRefsIn(fd, "refs/", found, buf) {
		return nil, false
	}
	return found, true
}

// plainLooseRefsIn is plainLooseRefs of the directory fd (named prefix,
// with its slash), which it closes.
func plainLooseRefsIn(fd int, prefix string, found map[string]OID, buf []byte) bool {
	d := os.NewFile(uintptr(fd), prefix)
	defer d.Close()
	entries, err := d.ReadDir(-1)
	if err != nil {
		return false
	}
	for _, e := range entries {
		n := e.Name()
		switch t := e.Type(); {
		case t.IsDir():
			sub, err := openDirAt(fd, n)
			if err != nil || !plainLooseRefsIn(sub, prefix+n+"/", found, buf) {
				return false
			}
		case strings.HasSuffix(n, ".lock"):
		case !t.IsRegular():
			return false
		default:
			name := prefix + n
			if CheckRefName(name) != nil {
				return false
			}
			oid, ok := readPlainRef(fd, n, buf)
			if !ok {
				return false
			}
			found[name] = oid
		}
	}
	return true
}

// readPlainRef reads the loose ref file name in the directory fd: false
// unless it is a regular file (no link followed) of at most maxRefFile
// bytes holding an object id.
func readPlainRef(fd int, name string, buf []byte) (OID, bool) {
	f, err := openAtRetry(fd, name, syscall.O_RDONLY|syscall.O_NONBLOCK|syscall.O_NOFOLLOW|syscall.O_CLOEXEC)
	if err != nil {
		return "", false
	}
	defer syscall.Close(f)
	var st syscall.Stat_t
	if err := syscall.Fstat(f, &st); err != nil || st.Mode&syscall.S_IFMT != syscall.S_IFREG || st.Size > maxRefFile {
		return "", false
	}
	n, err := syscall.Read(f, buf)
	// a regular file reads short only at its end: n < len(buf) is the
	// whole file (a file grown past maxRefFile meanwhile fills buf)
	if err != nil || n < 0 || n >= len(buf) {
		return "", false
	}
	oid, target, err := parseLooseRef(buf[:n])
	if err != nil || target != "" {
		return "", false
	}
	return oid, true
}

// openDirAt opens the directory name in the directory fd, not following a
// symbolic link.
func openDirAt(fd int, name string) (int, error) {
	return openAtRetry(fd, name, syscall.O_RDONLY|syscall.O_DIRECTORY|syscall.O_NOFOLLOW|syscall.O_CLOEXEC)
}

// atFDCWD is Linux's AT_FDCWD (on every architecture), which package
// syscall does not export.
const atFDCWD = -0x64

func openAtRetry(fd int, name string, flag int) (int, error) {
	for {
		f, err := syscall.Openat(fd, name, flag, 0)
		if err != syscall.EINTR {
			return f, err
		}
	}
}
