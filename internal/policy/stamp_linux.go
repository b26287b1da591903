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
