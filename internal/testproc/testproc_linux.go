package testproc

import (
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
)

const prSetChildSubreaper = 36 // PR_SET_CHILD_SUBREAPER from linux/prctl.h

// memoryDir is where MemoryScratch makes its directory.
const memoryDir = "/dev/shm"

const tmpfsMagic = 0x01021994 // TMPFS_MAGIC from linux/magic.h

// stNoexec is ST_NOEXEC, the statfs flag of a file system mounted noexec
// (the value of MS_NOEXEC, which the syscall package names).
const stNoexec = syscall.MS_NOEXEC

// memoryFS reports whether dir is a writable directory on tmpfs that allows
// running programs: the tests run the binaries they put in TMPDIR (the
// readproof testscript puts on PATH, a permission test's bin/readproof),
// and Docker mounts /dev/shm noexec.
func memoryFS(dir string) bool {
	var st syscall.Statfs_t
	if err := syscall.Statfs(dir, &st); err != nil || st.Type != tmpfsMagic || st.Flags&stNoexec != 0 {
		return false
	}
	return syscall.Access(dir, 2 /* W_OK */) == nil
}

// adoptOrphans makes this process the reaper of its orphaned descendants.
func adoptOrphans() error {
	if _, _, errno := syscall.RawSyscall(syscall.SYS_PRCTL, prSetChildSubreaper, 1, 0); errno != 0 {
		return errno
	}
	return nil
}

// Leftovers lists the live descendants of this process; zombie children
// (exited, not yet waited for) are reaped and left out.
func Leftovers() ([]Proc, error) {
	self := os.Getpid()
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil, err
	}
	type info struct {
		ppid  int
		state byte
	}
	procs := map[int]info{}
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		data, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue // gone meanwhile
		}
		// pid (comm) state ppid ...; comm may hold spaces and parentheses
		s := string(data)
		i := strings.LastIndexByte(s, ')')
		if i < 0 {
			continue
		}
		f := strings.Fields(s[i+1:])
		if len(f) < 2 {
			continue
		}
		ppid, _ := strconv.Atoi(f[1])
		procs[pid] = info{ppid: ppid, state: f[0][0]}
	}
	var out []Proc
	for pid, in := range procs {
		if pid == self {
			continue
		}
		descendant := false
		for p, seen := in.ppid, 0; p > 1 && seen < 64; seen++ {
			if p == self {
				descendant = true
				break
			}
			p = procs[p].ppid
		}
		if !descendant {
			continue
		}
		if in.state == 'Z' {
			if in.ppid == self {
				var ws syscall.WaitStatus
				syscall.Wait4(pid, &ws, syscall.WNOHANG, nil)
			}
			continue
		}
		cmd, _ := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "cmdline"))
		out = append(out, Proc{PID: pid, Cmdline: strings.TrimSpace(strings.ReplaceAll(string(cmd), "\x00", " "))})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].PID < out[j].PID })
	return out, nil
}

func kill(ps []Proc) {
	for _, p := range ps {
		syscall.Kill(p.PID, syscall.SIGKILL)
	}
	for _, p := range ps {
		var ws syscall.WaitStatus
		syscall.Wait4(p.PID, &ws, 0, nil) // only our own children can be waited for
	}
}
