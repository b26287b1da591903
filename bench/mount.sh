#!/usr/bin/env bash
# Issue 15, acceptance 6: `run mount` of N URIs in one call against `run --id`
# of the same N URIs (N=1,000 documents of 3 KiB), timed as PAIRS paired runs
# (each pair: a fresh run id for each form, run back to back) with the medians
# and their ratio printed. Target: the mount call within 1.5x of run --id
# (the run start and run commit around it are timed and printed apart).
# Usage: bench/mount.sh [PAIRS] [N]   (default 5 1000; needs go and git;
# writes only under a temp dir). Quick check of the script: bench/mount.sh 3 100
set -euo pipefail
pairs=${1:-5}
n=${2:-1000}
here=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
CGO_ENABLED=${CGO_ENABLED:-0} go build -o "$work/readproof" "$here"
cp "$work/readproof" "$work/readproof.copy" && mv "$work/readproof.copy" "$work/readproof" # time a copy, not the linker's file (docs/startup.md)
rp="$work/readproof"

ms() { date +%s%N; }
median() { sort -n | awk '{a[NR]=$1} END {print (NR%2) ? a[(NR+1)/2] : int((a[NR/2]+a[NR/2+1])/2)}'; }

proj="$work/p"; mkdir -p "$proj/docs"; cd "$proj"
last=$((n - 1))
{ echo "version = 1"; for i in $(seq -w 0 "$last"); do
    head -c 2300 /dev/urandom | base64 -w 76 > "docs/d$i.md"
    printf '\n[[resource]]\nuri = "readproof://bench/docs/d%s"\nsource = { type = "filesystem", path = "docs/d%s.md" }\n' "$i" "$i"
  done; } > readproof.toml
"$rp" init >/dev/null
uris=$(for i in $(seq -w 0 "$last"); do printf 'readproof://bench/docs/d%s ' "$i"; done)
# one run first, so that every timed run meets the same store: each resource
# has its snapshot, and the sources are unchanged
"$rp" run --id warm $uris >/dev/null

once=(); mount=(); whole=()
for p in $(seq 1 "$pairs"); do
  t0=$(ms); "$rp" run --id "once$p" $uris >/dev/null 2>&1; t1=$(ms)
  once+=($(( (t1 - t0) / 1000000 )))
  ts=$(ms); "$rp" run start "m$p" >/dev/null
  t0=$(ms); "$rp" run mount "m$p" $uris >/dev/null 2>"$work/mount.err"; t1=$(ms)
  "$rp" run commit "m$p" >/dev/null; tc=$(ms)
  mount+=($(( (t1 - t0) / 1000000 )))
  whole+=($(( (tc - ts) / 1000000 )))
  lines=$(wc -l < "$work/mount.err")
done
mo=$(printf '%s\n' "${once[@]}" | median)
mm=$(printf '%s\n' "${mount[@]}" | median)
echo "load: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "run --id of $n URIs:                          median ${mo} ms   (runs: ${once[*]})"
echo "run mount of $n URIs (one call):              median ${mm} ms   (runs: ${mount[*]})"
echo "run start + that mount + run commit:           median $(printf '%s\n' "${whole[@]}" | median) ms   (runs: ${whole[*]})"
echo "stderr lines of one run mount call: $lines"
awk -v a="$mm" -v b="$mo" 'BEGIN { r = a / b; printf "ratio mount/run --id: %.2f (target <= 1.5) %s\n", r, (r <= 1.5 ? "ok" : "OVER"); exit (r <= 1.5 ? 0 : 1) }'
