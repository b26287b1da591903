package policy

import (
	"os"
	"strconv"
	"syscall"
	"time"
)

// fileStamp is what the cache's stat line records of the policy file fi
// describes (docs/store-format.md, "The policy cache"): its device, inode,
// modification and change times in nanoseconds, and its change time; ok is
// false when the system does not say.
func fileStamp(fi os.FileInfo) (stamp string, ctime time.Time, ok bool) {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok || st.Ino == 0 || st.Ctim.Sec == 0 && st.Ctim.Nsec == 0 {
		return "", time.Time{}, false
	}
	b := strconv.AppendUint(nil, st.Dev, 10)
	b = append(b, ' ')
	b = strconv.AppendUint(b, st.Ino, 10)
	b = append(b, ' ')
	b = strconv.AppendInt(b, st.Mtim.Nano(), 10)
	b = append(b, ' ')
	b = strconv.AppendInt(b, st.Ctim.Nano(), 10)
	return string(b), time.Unix(0, st.Ctim.Nano()), true
}

// fsType is the type (statfs's f_type) of the file system holding the
// open file, or path when file is nil; ok is false when it cannot be had.
func fsType(file *os.File, path string) (uint32, bool) {
	var st syscall.Statfs_t
	var err error
	if file == nil {
		err = syscall.Statfs(path, &st)
	} else {
		rc, cerr := file.SyscallConn()
		if cerr != nil {
			return 0, false
		}
		if cerr = rc.Control(func(fd uintptr) { err = syscall.Fstatfs(int(fd), &st) }); cerr != nil {
			return 0, false
		}
	}
	return uint32(st.Type), err == nil
}

// keepsCtime reports whether a file system of type t (fsType) is one
// whose change times the kernel itself sets at every change, so that a
// stat line binds the file's bytes: local disk file systems and tmpfs,
// and overlayfs, whose files are theirs. Not FUSE (the daemon says what
// the ctime is: sshfs gives the mtime, which anyone can set back), network
// file systems (the server's clock, not the one stampSettle is measured
// by), FAT and exFAT (no change time on disk), or any other: their loads
// hash the file.
func keepsCtime(t uint32) bool {
	switch t {
	case 0xEF53, // ext2, ext3, ext4
		0x58465342, // XFS
		0x9123683E, // Btrfs
		0xF2F52010, // F2FS
		0x2FC12FC1, // ZFS
		0xCA451A4E, // bcachefs
		0x01021994, // tmpfs
		0x858458F6, // ramfs
		0x794C7630: // overlayfs
		return true
	}
	return false
}
