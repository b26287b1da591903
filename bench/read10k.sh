#!/usr/bin/env bash
# The reading commands at 10,000 entries side by side with the peer
# (Readproof v0.3.2), issue 14 acceptance 2: `manifest RUN` and `replay RUN`
# of one recorded run each, medians of PAIRS (10) alternating pairs
# (bench/pairtime.go), wall and CPU, with the load before and after.
#
# Usage: WORK=DIR PEER=/path/to/readproof-v0.3.2 bench/read10k.sh [PAIRS]
#
# WORK is a work directory of bench/write.sh (its documents in WORK/p and
# the peer's registered resources in WORK/peer.tpl: run
# `WORK=DIR PEER=... bench/write.sh 10000 1` once first; any N works). The
# run is recorded once by each tool into WORK/reads (the peer takes about
# ten minutes for 10,000 documents) and kept: a second call reuses it, with
# this tree's binary built afresh (a store written by an older binary stays
# as it was written: remove WORK/reads/ours.store to record it again).
set -euo pipefail
pairs=${1:-10}
work=${WORK:?WORK=DIR: a bench/write.sh work directory}
peer=${PEER:?PEER=PATH: the peer binary}
here=$(cd "$(dirname "$0")/.." && pwd)
[ -s "$work/p/uris" ] && [ -e "$work/peer.tpl.done" ] ||
  { echo "bench/read10k.sh: $work is not a bench/write.sh work directory with the peer's resources" >&2; exit 2; }
r=$work/reads
mkdir -p "$r"
CGO_ENABLED=${CGO_ENABLED:-0} go build -o "$r/readproof" "$here"
cp "$r/readproof" "$r/readproof.copy" && mv "$r/readproof.copy" "$r/readproof" # time a copy, not the linker's file (docs/startup.md)
go build -o "$r/pairtime" "$here/bench/pairtime.go"
cd "$work/p"
mapfile -t uris < uris
if [ ! -e "$r/ours.done" ]; then
  rm -rf "$r/ours.store"
  "$r/readproof" --store "$r/ours.store" init >/dev/null
  "$r/readproof" --store "$r/ours.store" run --id r1 "${uris[@]}" >/dev/null
  : > "$r/ours.done"
fi
if [ ! -e "$r/peer.done" ]; then
  echo "# recording ${#uris[@]} documents with the peer (untimed)..." >&2
  rm -rf "$r/peer.data"
  cp -r "$work/peer.tpl" "$r/peer.data"
  "$peer" --data-dir "$r/peer.data" run --id r1 "${uris[@]}" >/dev/null
  : > "$r/peer.done"
fi
echo "# bench/read10k.sh: ${#uris[@]} entries, $pairs pairs, $(date -u +%FT%TZ)"
echo "# load before: $(uptime)"
for c in manifest replay; do
  # A is the peer, B is ours; pairtime alternates which goes first.
  "$r/pairtime" -n "$pairs" -label "$c" -a "$peer" -b "$r/readproof" \
    -env-a "READPROOF_HOME=$r/peer.data" -env "READPROOF_STORE=$r/ours.store" -- "$c" r1
done
echo "# load after: $(uptime)"
