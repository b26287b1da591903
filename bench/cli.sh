#!/usr/bin/env bash
# Times the readproof CLI on the issue's workloads (wall clock, best of N):
#   - a single-shot run mounting 1,000 documents of 4 KiB   (target < 0.5 s)
#   - replay of that manifest                               (target < 0.15 s)
#   - `run mount` and `manifest` latency on an empty store and on one holding
#     10,000 runs (target: within 1.25x)
# Usage: bench/cli.sh [REPEAT]   (needs go and git; writes only under a temp dir)
set -euo pipefail
repeat=${1:-5}
here=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
CGO_ENABLED=${CGO_ENABLED:-0} go build -o "$work/readproof" "$here"
cp "$work/readproof" "$work/readproof.copy" && mv "$work/readproof.copy" "$work/readproof" # time a copy, not the linker's file (docs/startup.md)
rp="$work/readproof"

ms() { date +%s%N; }
best() { # best wall time in ms of "$@" over $repeat runs (each run may use a fresh id via {i})
  local best=999999999 i t0 t1 d
  for i in $(seq 1 "$repeat"); do
    t0=$(ms); "${@//\{i\}/$i}" >/dev/null 2>&1 || { echo "failed: $*" >&2; exit 1; }; t1=$(ms)
    d=$(( (t1 - t0) / 1000000 )); (( d < best )) && best=$d
  done
  echo "$best"
}

proj="$work/p"; mkdir -p "$proj/docs"; cd "$proj"
{ echo "version = 1"; for i in $(seq -w 0 999); do
    head -c 3000 /dev/urandom | base64 -w 76 > "docs/d$i.md"
    printf '\n[[resource]]\nuri = "readproof://bench/docs/d%s"\nsource = { type = "filesystem", path = "docs/d%s.md" }\n' "$i" "$i"
  done; } > readproof.toml
"$rp" init >/dev/null
uris=$(for i in $(seq -w 0 999); do printf 'readproof://bench/docs/d%s ' "$i"; done)

# first run into a fresh store: 1,000 new resource chains (1,000 ref updates)
first=999999999
for i in $(seq 1 "$repeat"); do
  rm -rf fresh.store && "$rp" --store fresh.store init >/dev/null
  t0=$(ms); "$rp" --store fresh.store run --id first $uris >/dev/null; t1=$(ms)
  d=$(( (t1 - t0) / 1000000 )); (( d < first )) && first=$d
done
run1000=$(best "$rp" run --id "big{i}" $uris)
replay=$(best "$rp" replay --no-content big1)
echo "run of 1,000 x 4 KiB documents, fresh store: ${first} ms   (target < 500)"
echo "run of the same 1,000, unchanged sources:    ${run1000} ms"
echo "replay of that manifest:                     ${replay} ms   (target < 150)"

"$rp" run start open >/dev/null
mount0=$(best "$rp" run mount open readproof://bench/docs/d000)
man0=$(best "$rp" manifest big1)

# 10,000 more runs: run refs made with stock git plumbing, all naming real
# manifests, so ref count (not object count) is what grows.
m=$(git --git-dir .readproof rev-parse readproof/runs/big1)
for i in $(seq -w 0 9999); do echo "create refs/tags/readproof/runs/h$i $m"; done | git --git-dir .readproof update-ref --stdin
mount10k=$(best "$rp" run mount open readproof://bench/docs/d000)
man10k=$(best "$rp" manifest h5000)
git --git-dir .readproof pack-refs --all
mount10kp=$(best "$rp" run mount open readproof://bench/docs/d000)
man10kp=$(best "$rp" manifest h9999)
echo "run mount, empty store:         ${mount0} ms"
echo "run mount, 10,000 runs (loose): ${mount10k} ms"
echo "run mount, 10,000 runs (packed):${mount10kp} ms"
echo "manifest, empty store:          ${man0} ms"
echo "manifest, 10,000 runs (loose):  ${man10k} ms"
echo "manifest, 10,000 runs (packed): ${man10kp} ms"
