#!/usr/bin/env bash
# bench/latency.sh: the per-process cost of the commands an agent runs one
# document at a time (issue 14, acceptance 2: a 1-document `run --id` and
# `get` under 10 ms, 0.5x the peer's). Each tool gets a project directory of
# its own holding one document of 4 KiB, already recorded once (so each
# timed call is the steady state: the resource exists, its content did not
# change), and bench/pairtime.go runs the two alternately, PAIRS (21) times
# each: median wall and CPU (user+system) time and their ratio.
#
#   bench/latency.sh [PAIRS]
#
#   PEER=BINARY  the peer (Readproof v0.3.2; default /work/peer/readproof or
#                $READPROOF_PEER; never part of this repository, see read.sh);
#                PEER=none leaves it out
#   BASE=REV     also compare ours at REV against the work tree (A = REV)
#   POLICY=N     declare N-1 more resources in readproof.toml (ours) and
#                register them with the peer (default 1: the one document);
#                write.sh measures the same calls with N=1,000
#   KEEP=1       keep the work directory
#   CGO_ENABLED  how ours (and BASE) are built: 0 by default, the static
#                binary the README installs; CGO_ENABLED=1 measures the
#                dynamically linked build `go build` makes where a C
#                compiler is found (docs/startup.md, session 7)
#
# Both tools use their default data directory (`.readproof`) in their own
# project. On a busy machine compare the ratios and the CPU times, never the
# absolute walls across sittings; `uptime` is printed before and after.
set -euo pipefail
pairs=${1:-21}
here=$(cd "$(dirname "$0")/.." && pwd)
peer=${PEER:-${READPROOF_PEER:-}}
[ -n "$peer" ] || { [ -x /work/peer/readproof ] && peer=/work/peer/readproof; } || true
[ "$peer" != none ] || peer=
policy=${POLICY:-1}
work=$(mktemp -d "${TMPDIR:-/tmp}/readproof-latency.XXXXXX")
if [ -z "${KEEP:-}" ]; then
  trap 'rm -rf "$work"' EXIT
else
  echo "# work directory: $work" >&2
fi
export CGO_ENABLED=${CGO_ENABLED:-0}
(cd "$here" && go build -o "$work/readproof" . && go build -o "$work/pairtime" bench/pairtime.go)
if [ -n "${BASE:-}" ]; then
  mkdir "$work/base-src"
  git -C "$here" archive "$BASE" | tar -x -C "$work/base-src"
  (cd "$work/base-src" && go build -o "$work/readproof-base" .)
fi
# Each binary is timed as a copy of its own, written by cp: a binary the
# linker has just written starts 12 to 15% slower (CPU, `version`, 201
# pairs) than a cp of the same bytes for as long as its pages stay in the
# page cache as the linker left them, and the peer's file 6% slower than its
# copy (docs/startup.md, session 9). Copying all three compares the tools,
# not how their files came to be cached.
recopy() { cp "$1" "$1.copy" && mv "$1.copy" "$1"; } # replaces FILE by a cp of it
recopy "$work/readproof"
[ -z "${BASE:-}" ] || recopy "$work/readproof-base"
if [ -n "$peer" ]; then
  cp "$peer" "$work/readproof-peer" && chmod +x "$work/readproof-peer"
  peer_src=$peer
  peer=$work/readproof-peer
fi
# after the builds, which need the user's module and build caches
export HOME=$work/home GIT_CONFIG_NOSYSTEM=1 GIT_CONFIG_GLOBAL=/dev/null
unset READPROOF_HOME OTEL_EXPORTER_OTLP_ENDPOINT OTEL_EXPORTER_OTLP_TRACES_ENDPOINT TRACEPARENT
mkdir -p "$HOME"
echo "# bench/latency.sh: $pairs pairs, policy of $policy resources, $(date -u +%FT%TZ)"
echo "# ours: $(cd "$here" && git describe --always --dirty) (CGO_ENABLED=$CGO_ENABLED)${BASE:+, base $BASE}${peer:+, peer ${peer_src:-$peer}}"
echo "# load before: $(uptime)"

# The project: docs/d00000.md is the document every call reads; the others
# only make the policy POLICY resources long.
tpl=$work/tpl
mkdir -p "$tpl/docs"
for i in $(seq 0 $((policy - 1))); do
  printf -v f 'd%05d' "$i"
  head -c 3000 /dev/urandom | base64 -w 76 > "$tpl/docs/$f.md"
done
awk -v n="$policy" 'BEGIN { print "version = 1"; for (i = 0; i < n; i++) printf "\n[[resource]]\nuri = \"readproof://bench/docs/d%05d\"\nsource = { type = \"filesystem\", path = \"docs/d%05d.md\" }\n", i, i }' \
  > "$tpl/readproof.toml"
uri=readproof://bench/docs/d00000

# ours DIR BINARY: a project with a store, the document recorded once
ours() {
  cp -r "$tpl" "$1"
  (cd "$1" && "$2" init >/dev/null && "$2" run --id warm "$uri" >/dev/null)
}
ours "$work/ours" "$work/readproof"
# The work tree gets a second project for the comparison with BASE: the
# first has taken the comparison with the peer's writes by then, and a store
# with 31 more runs made `run --id` 5% slower (CPU, five sittings) than
# BASE's fresh one.
if [ -n "${BASE:-}" ]; then
  ours "$work/base" "$work/readproof-base"
  ours "$work/new" "$work/readproof"
fi
if [ -n "$peer" ]; then
  cp -r "$tpl" "$work/peer"
  rm "$work/peer/readproof.toml"
  (cd "$work/peer" && for i in $(seq 0 $((policy - 1))); do
    printf -v f 'd%05d' "$i"
    "$peer" resource add "readproof://bench/docs/$f" --source-type filesystem --path "docs/$f.md" \
      --policy require_fresh >/dev/null
  done && "$peer" run --id warm "$uri" >/dev/null)
fi

# compare LABEL A DIR-A B DIR-B
compare() {
  local label=$1 a=$2 da=$3 b=$4 db=$5
  "$work/pairtime" -n "$pairs" -label "$label: run --id" -a "$a" -b "$b" -dir-a "$da" -dir-b "$db" -- \
    run --id "one-${label%%/*}-{side}-{i}" "$uri"
  "$work/pairtime" -n "$pairs" -label "$label: get" -a "$a" -b "$b" -dir-a "$da" -dir-b "$db" -- get "$uri"
  "$work/pairtime" -n "$pairs" -label "$label: version" -a "$a" -b "$b" -dir-a "$da" -dir-b "$db" -- version
}
echo
if [ -n "$peer" ]; then
  echo "## A = the peer, B = ours (target: B under 10 ms wall, ratio <= 0.5)"
  compare "peer/ours" "$peer" "$work/peer" "$work/readproof" "$work/ours"
fi
if [ -n "${BASE:-}" ]; then
  echo "## A = ours at $BASE, B = the work tree"
  compare "base/new" "$work/readproof-base" "$work/base" "$work/readproof" "$work/new"
fi
echo
echo "# load after: $(uptime)"
