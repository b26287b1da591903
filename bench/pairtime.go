//go:build ignore

// pairtime runs two commands alternately, N times each, and prints the
// median wall and CPU (user+system) time of each and their ratio: a paired
// comparison that a busy machine disturbs less than two separate series.
//
//	go run bench/pairtime.go -n 20 -a BASE -b NEW [-env K=V]... [-otlp] -- ARGS...
//
// Each command runs as "BINARY ARGS..." with stdout and stderr discarded,
// in the current directory; -env adds to the environment of B only (and
// -env-a to A only). In ARGS, {side} becomes "a" or "b" and {i} the run's
// number, so each run can use a fresh run id and each side its own store.
// -dir-a and -dir-b run A and B in directories of their own instead (two
// tools that keep their data in the same default place, or take different
// flags for it, each find theirs there).
// With -otlp an OTLP/HTTP receiver that accepts everything listens on
// 127.0.0.1 and {otlp} in -env values becomes its URL; the number of
// exports it took is printed. A failing run is an error: the comparison is
// only worth something when both sides did the work.
package main

import (
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"sort"
	"strconv"
	"strings"
	"sync/atomic"
	"time"
)

type multi []string

func (m *multi) String() string     { return strings.Join(*m, ",") }
func (m *multi) Set(s string) error { *m = append(*m, s); return nil }

func main() {
	n := flag.Int("n", 20, "runs of each command")
	a := flag.String("a", "", "baseline binary")
	b := flag.String("b", "", "binary under test")
	label := flag.String("label", "", "a name for this comparison in the output")
	var envA, envB multi
	flag.Var(&envA, "env-a", "K=V added to A's environment (repeatable)")
	flag.Var(&envB, "env", "K=V added to B's environment (repeatable)")
	otlp := flag.Bool("otlp", false, "run a local OTLP/HTTP receiver; {otlp} in -env values is its URL")
	dirA := flag.String("dir-a", "", "run A in this directory (default: the current one)")
	dirB := flag.String("dir-b", "", "run B in this directory (default: the current one)")
	flag.Parse()
	var exports atomic.Int64
	if *otlp {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			fmt.Fprintln(os.Stderr, "pairtime:", err)
			os.Exit(1)
		}
		go http.Serve(ln, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			io.Copy(io.Discard, r.Body)
			exports.Add(1)
			w.Header().Set("Content-Type", "application/x-protobuf")
		}))
		url := "http://" + ln.Addr().String()
		for i := range envB {
			envB[i] = strings.ReplaceAll(envB[i], "{otlp}", url)
		}
		for i := range envA {
			envA[i] = strings.ReplaceAll(envA[i], "{otlp}", url)
		}
	}
	if *a == "" || *b == "" {
		fmt.Fprintln(os.Stderr, "pairtime: give -a BASE and -b NEW")
		os.Exit(2)
	}
	args := flag.Args()
	var wa, wb, ca, cb []time.Duration
	for i := 0; i < *n; i++ {
		// Alternate which side goes first so a slow moment hits both.
		order := []bool{true, false}
		if i%2 == 1 {
			order = []bool{false, true}
		}
		for _, isA := range order {
			bin, env, side, dir := *b, envB, "b", *dirB
			if isA {
				bin, env, side, dir = *a, envA, "a", *dirA
			}
			w, c, err := once(bin, dir, expand(args, side, i), env)
			if err != nil {
				fmt.Fprintf(os.Stderr, "pairtime: %s %s: %v\n", bin, strings.Join(args, " "), err)
				os.Exit(1)
			}
			if isA {
				wa, ca = append(wa, w), append(ca, c)
			} else {
				wb, cb = append(wb, w), append(cb, c)
			}
		}
	}
	ma, mb, mca, mcb := median(wa), median(wb), median(ca), median(cb)
	fmt.Printf("%s wall A %s B %s ratio %.3f | cpu A %s B %s ratio %.3f (median of %d, paired)\n",
		*label, ms(ma), ms(mb), float64(mb)/float64(ma), ms(mca), ms(mcb), float64(mcb)/float64(mca), *n)
	if *otlp {
		fmt.Printf("%s receiver took %d exports\n", *label, exports.Load())
	}
}

func expand(args []string, side string, i int) []string {
	out := make([]string, len(args))
	for j, a := range args {
		out[j] = strings.ReplaceAll(strings.ReplaceAll(a, "{side}", side), "{i}", strconv.Itoa(i))
	}
	return out
}

func once(bin, dir string, args, env []string) (wall, cpu time.Duration, err error) {
	cmd := exec.Command(bin, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	start := time.Now()
	err = cmd.Run()
	wall = time.Since(start)
	if cmd.ProcessState != nil {
		cpu = cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
	}
	return wall, cpu, err
}

func median(d []time.Duration) time.Duration {
	s := append([]time.Duration(nil), d...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

func ms(d time.Duration) string { return fmt.Sprintf("%.2fms", float64(d)/1e6) }
