#!/usr/bin/env bash
# Issue 14, acceptance 2 (second half): `run mount` and `manifest` on a store
# holding N runs stay within 1.25x of an empty store, both with loose refs (as
# the runs were written) and after `readproof gc` (packed refs, one packed
# index of every object); and a 1-document `run --id` and `get` there, beside
# the empty store's (under 10 ms: bench/latency.sh compares them with the
# peer's).
#
# The N runs are made by bench/scalegen.go through one `git fast-import`,
# copies of one run the CLI committed (each with its own manifest, run tag and
# journal commit), so building 50,000 takes seconds, not hours.
#
# Usage: bench/flat.sh [N] [PAIRS]   (N runs, default 50000; PAIRS timed pairs
# per comparison, default 20). Needs go and git; writes only under a temp dir
# (SCALE_KEEP=1 keeps it). Each line compares the empty store (A) with the big
# one (B): median wall and CPU time of PAIRS alternating runs, and B/A.
set -euo pipefail
n=${1:-50000}
pairs=${2:-20}
here=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d)
if [ "${SCALE_KEEP:-}" = 1 ]; then echo "work directory: $work"; else trap 'rm -rf "$work"' EXIT; fi
CGO_ENABLED=${CGO_ENABLED:-0} go build -o "$work/readproof" "$here"
cp "$work/readproof" "$work/readproof.copy" && mv "$work/readproof.copy" "$work/readproof" # time a copy, not the linker's file (docs/startup.md)
go build -o "$work/pairtime" "$here/bench/pairtime.go"
go build -o "$work/scalegen" "$here/bench/scalegen.go"
rp="$work/readproof"

proj="$work/p"; mkdir -p "$proj/docs"; cd "$proj"
docs=10
{ echo "version = 1"; for i in $(seq 1 $docs); do
    head -c 3000 /dev/urandom | base64 -w 76 > "docs/d$i.md"
    printf '\n[[resource]]\nuri = "readproof://bench/docs/d%s"\nsource = { type = "filesystem", path = "docs/d%s.md" }\n' "$i" "$i"
  done; } > readproof.toml
uris=$(for i in $(seq 1 $docs); do printf 'readproof://bench/docs/d%s ' "$i"; done)
"$rp" --store empty.store init >/dev/null
# shellcheck disable=SC2086
"$rp" --store empty.store run --id t0 $uris >/dev/null
cp -a empty.store big.store

t0=$(date +%s%N)
"$work/scalegen" -store big.store -template t0 -n "$n"
t1=$(date +%s%N)
echo "built $n runs with git fast-import in $(( (t1 - t0) / 1000000 )) ms"
for s in empty big; do "$rp" --store $s.store run start open >/dev/null; done

compare() { # LABEL ARGS...: empty store (A) against the big one (B)
  local label=$1; shift
  "$work/pairtime" -n "$pairs" -label "$label" -a "$rp" -b "$rp" \
    -env-a READPROOF_STORE=empty.store -env READPROOF_STORE=big.store -- "$@"
}
state() {
  printf '%s: ' "$1"
  git --git-dir big.store count-objects -v | awk -F': ' '/^(count|in-pack|packs)/ {printf "%s %s  ", $1, $2}'
  printf 'loose refs %s, packed-refs %s bytes\n' \
    "$(find big.store/refs -type f | wc -l)" "$(stat -c %s big.store/packed-refs 2>/dev/null || echo 0)"
}

echo "load: $(uptime | sed 's/.*load average: //')"
state "big store as written"
compare "run mount (loose refs)     " run mount open readproof://bench/docs/d1
compare "manifest  (loose refs)     " manifest t0
compare "run --id  (loose refs)     " run --id "one-{side}-{i}" readproof://bench/docs/d3
compare "get       (loose refs)     " get readproof://bench/docs/d4
"$rp" --store empty.store gc >/dev/null
"$rp" --store big.store gc >/dev/null
state "big store after gc"
compare "run mount (after gc)       " run mount open readproof://bench/docs/d2
compare "manifest  (after gc)       " manifest t0
compare "run --id  (after gc)       " run --id "gc-{side}-{i}" readproof://bench/docs/d5
compare "get       (after gc)       " get readproof://bench/docs/d6
echo "load: $(uptime | sed 's/.*load average: //')"
"$rp" --store big.store verify >/dev/null && echo "big store verifies"
