#!/usr/bin/env bash
# Times the commands that read a recorded run, side by side with the peer we
# replace (Readproof v0.3.2), on the workload of issue 14 (acceptance 1):
#   N documents of 4 KiB (1,000), one run recorded by each tool, a second run
#   after 10 documents changed, then, each as the median of REPEAT (5)
#   alternating pairs: replay, manifest, diff, and evidence export
#   --with-content followed by evidence verify --offline.
#
# Usage: bench/read.sh PEER_BINARY          (or READPROOF_PEER=PATH bench/read.sh)
#        N=200 REPEAT=7 bench/read.sh PEER_BINARY
#
# The peer is not part of this repository and is never vendored here; build it
# from its source: fetch github.com/fbzz/readproof at tag v0.3.2, then run
# `go build ./cmd/readproof` in it and pass the resulting binary.
#
# Needs go and git; writes only under a temporary directory (KEEP=1 keeps it).
# Prints a markdown table with the load (uptime) before and after: figures
# taken on a busy machine are only comparable with each other.
set -euo pipefail
peer=${1:-${READPROOF_PEER:-}}
n=${N:-1000}
repeat=${REPEAT:-5}
if [[ -z "$peer" || ! -x "$peer" ]]; then
  echo "usage: bench/read.sh PEER_BINARY (the peer: github.com/fbzz/readproof v0.3.2, go build ./cmd/readproof)" >&2
  exit 2
fi
if (( repeat < 5 )); then
  echo "bench/read.sh: REPEAT must be at least 5 (medians of at least 5 pairs)" >&2
  exit 2
fi
peer=$(cd "$(dirname "$peer")" && pwd)/$(basename "$peer")
here=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d)
if [[ -z "${KEEP:-}" ]]; then trap 'rm -rf "$work"' EXIT; else echo "work directory: $work" >&2; fi

CGO_ENABLED=${CGO_ENABLED:-0} go build -o "$work/readproof" "$here"
go build -o "$work/pairtime" "$here/bench/pairtime.go"
# Both tools are timed as cp copies of their binaries: a binary the linker
# has just written starts 12 to 15% slower than a copy of it (latency.sh).
cp "$work/readproof" "$work/readproof.copy" && mv "$work/readproof.copy" "$work/readproof"
cp "$peer" "$work/readproof-peer" && chmod +x "$work/readproof-peer" && peer=$work/readproof-peer
ours=$work/readproof
load_before=$(uptime)

# The project: N documents of 4 KiB, declared in readproof.toml for us and
# registered with `resource add` for the peer (it keeps its own registry in
# its data directory, here $work/peer.data).
proj=$work/p
mkdir -p "$proj/docs"
cd "$proj"
{
  echo "version = 1"
  for i in $(seq -w 1 "$n"); do
    head -c 3024 /dev/urandom | base64 -w 63 > "docs/d$i.md" # 64 lines of 64 bytes
    printf '\n[[resource]]\nuri = "readproof://bench/docs/d%s"\nsource = { type = "filesystem", path = "docs/d%s.md" }\n' "$i" "$i"
  done
} > readproof.toml
uris=$(for i in $(seq -w 1 "$n"); do printf 'readproof://bench/docs/d%s ' "$i"; done)

export READPROOF_HOME=$work/peer.data
echo "registering $n resources with the peer..." >&2
for i in $(seq -w 1 "$n"); do
  "$peer" resource add "readproof://bench/docs/d$i" --source-type filesystem --path "docs/d$i.md" >/dev/null
done
unset READPROOF_HOME

# Two runs with each tool; 10 documents change in between.
"$ours" init >/dev/null
# shellcheck disable=SC2086
"$ours" run --id run-a $uris >/dev/null
# shellcheck disable=SC2086
READPROOF_HOME=$work/peer.data "$peer" run --id run-a $uris >/dev/null
for i in $(seq -w 1 10); do echo "changed $i" >> "docs/d$i.md"; done
# shellcheck disable=SC2086
"$ours" run --id run-b $uris >/dev/null
# shellcheck disable=SC2086
READPROOF_HOME=$work/peer.data "$peer" run --id run-b $uris >/dev/null

# The evidence round trip is two commands: a script per tool runs both.
cat > "$work/peer-evidence" <<EOF
#!/bin/sh
set -e
"$peer" evidence export run-a --with-content --out "$work/peer-bundle.json" >/dev/null
"$peer" evidence verify --offline "$work/peer-bundle.json" >/dev/null
EOF
cat > "$work/ours-evidence" <<EOF
#!/bin/sh
set -e
"$ours" evidence export run-a --with-content --out "$work/ours-bundle.json" >/dev/null
"$ours" evidence verify --offline "$work/ours-bundle.json" >/dev/null
EOF
chmod +x "$work/peer-evidence" "$work/ours-evidence"

# A is the peer, B is ours; pairtime alternates which goes first.
pair() { # LABEL A B ARGS...
  local label=$1 a=$2 b=$3
  shift 3
  "$work/pairtime" -n "$repeat" -label "$label" -a "$a" -b "$b" -env-a "READPROOF_HOME=$work/peer.data" -- "$@"
}
results=$(
  pair replay "$peer" "$ours" replay run-a
  pair manifest "$peer" "$ours" manifest run-a
  pair diff "$peer" "$ours" diff run-a run-b
  pair evidence "$work/peer-evidence" "$work/ours-evidence"
)
load_after=$(uptime)

echo
echo "$n documents of 4 KiB, medians of $repeat alternating pairs (wall; cpu = user+sys)"
echo
echo "| command | ours | peer | ours/peer | ours cpu | peer cpu |"
echo "| --- | --- | --- | --- | --- | --- |"
echo "$results" | awk '{
  # LABEL wall A x B y ratio r | cpu A x B y ratio r (...)
  name = $1
  if (name == "evidence") name = "evidence export --with-content + verify --offline"
  printf "| `%s` | %s | %s | %.2fx | %s | %s |\n", name, $6, $4, $8, $14, $12
}'
echo
echo "load before: ${load_before#*load average: }"
echo "load after:  ${load_after#*load average: }"
