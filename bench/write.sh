#!/usr/bin/env bash
# Times the write path of issue 14 side by side with the peer (Readproof
# v0.3.2) and with `git fast-import`, on N documents of 4 KiB:
#   - recording an N-document run on a fresh store (`run --id`), against the
#     peer's and against `git fast-import` of the same files as one tree and
#     one commit (targets: <= 0.06x the peer, <= 1.5x fast-import)
#   - `evidence export --with-content` + `evidence verify --offline`
#     (target <= 0.4x the peer), and `evidence verify` against the store
#   - a 1-document `run --id` and `get` on that store (target < 10 ms)
#   - peak RSS of the recording and of the verify (/usr/bin/time %M; target:
#     a 10,000-document run at most the peer's)
# Each figure is the median of PAIRS alternating pairs (ours, then the peer;
# the next pair the other way round): wall, CPU (user+system) and RSS. On a
# busy machine compare CPU and RSS; `uptime` is printed before and after.
#
# Usage: [PEER=/path/to/readproof-v0.3.2] bench/write.sh [N] [PAIRS]
#   N      documents (1000; 10000 for the memory row of the issue)
#   PAIRS  alternating pairs per figure (5)
#
# The peer is not part of this repository and is never vendored: build it
# yourself and pass its path in PEER (without PEER only our rows are shown):
#   git clone https://github.com/fbzz/readproof peer-src && cd peer-src
#   git checkout v0.3.2 && go build -o /somewhere/readproof-peer ./cmd/readproof
# The peer has no readproof.toml: its N resources are registered once with
# `resource add` (untimed; about 20-50 ms each) into a template data
# directory that each timed run starts from a copy of.
# Needs go, git and GNU time (/usr/bin/time); writes only under a temp dir.
#
# CGO_ENABLED: how ours is built, 0 by default: the static binary the README
# installs, as bench/latency.sh builds it (the dynamically linked build that
# `go build` makes where a C compiler is found maps libc too: 38.5-39.4 MiB
# against 37.1-37.8 MiB for the 10,000-document record, session 26). The
# peer is timed as its README builds it (`go build`, cgo where available).
#
# WORK=DIR uses DIR as the work directory and keeps it: a second run with the
# same WORK and N reuses its documents and the peer's registered resources
# (the 10,000 case's ~10 minutes of `resource add` are paid once).
set -euo pipefail
n=${1:-1000}
pairs=${2:-5}
peer=${PEER:-}
here=$(cd "$(dirname "$0")/.." && pwd)
if [ -n "${WORK:-}" ]; then
  work=$WORK
  mkdir -p "$work"
  rm -rf "$work"/ours.* "$work"/peer.record "$work"/peer.export "$work"/peer.verify "$work"/peer.verifystore \
    "$work"/peer.run1 "$work"/peer.get "$work"/fastimport.*
else
  work=$(mktemp -d)
  trap 'rm -rf "$work"' EXIT
fi
reuse=
if [ -n "${WORK:-}" ] && [ -s "$work/p/names" ] && [ "$(cat "$work/n" 2>/dev/null)" = "$n" ] &&
  [ "$(wc -l < "$work/p/names")" = "$n" ]; then
  reuse=1
fi
[ -x /usr/bin/time ] || { echo "bench/write.sh: needs GNU time at /usr/bin/time" >&2; exit 1; }
if [ -n "$peer" ] && [ ! -x "$peer" ]; then
  echo "bench/write.sh: PEER=$peer is not an executable" >&2; exit 1
fi
CGO_ENABLED=${CGO_ENABLED:-0} go build -o "$work/readproof" "$here"
cp "$work/readproof" "$work/readproof.copy" && mv "$work/readproof.copy" "$work/readproof" # time a copy, not the linker's file (docs/startup.md)
rp="$work/readproof"
echo "# bench/write.sh: $n documents of 4 KiB, $pairs pairs, $(date -u +%FT%TZ)"
echo "# load before: $(uptime)"

# ---- the documents: one random stream cut into files of 53 base64 lines
# (4,081 bytes each), one process for any N; a file takes 53 * 76 base64
# characters, 3,021 random bytes (3,000 a file made only N * 0.993 files)
proj="$work/p"
if [ -z "$reuse" ]; then
  rm -rf "$proj" "$work/peer.tpl" "$work/peer.tpl.done" "$work/n"
  mkdir -p "$proj/docs"; cd "$proj"
  head -c $((3021 * n + 3021)) /dev/urandom | base64 -w 76 |
    split -l 53 -d -a 5 --additional-suffix=.md - docs/d
  ls docs | sort | head -n "$n" > names
  # anything past N (the last, short piece) is not a document
  ls docs | sort | tail -n +$((n + 1)) | sed 's|^|docs/|' | xargs -r rm -f
  [ "$(wc -l < names)" = "$n" ] || { echo "bench/write.sh: made $(wc -l < names) documents, not $n" >&2; exit 1; }
fi
cd "$proj"
awk 'BEGIN { print "version = 1" } { sub(/\.md$/, ""); printf "\n[[resource]]\nuri = \"readproof://bench/docs/%s\"\nsource = { type = \"filesystem\", path = \"docs/%s.md\" }\n", $0, $0 }' names > readproof.toml
sed 's|^\(.*\)\.md$|readproof://bench/docs/\1|' names > uris
one=$(head -n 1 uris)
mapfile -t uris < uris

# ---- git fast-import's input: every file as a blob, then one commit whose
# tree names them all
{
  i=0
  while read -r f; do
    i=$((i + 1))
    printf 'blob\nmark :%d\ndata %d\n' "$i" "$(stat -c %s "docs/$f")"
    cat "docs/$f"
    printf '\n'
  done < names
  printf 'commit refs/heads/main\ncommitter bench <bench@example.com> 0 +0000\ndata 5\nbench\n'
  i=0
  while read -r f; do i=$((i + 1)); printf 'M 100644 :%d docs/%s\n' "$i" "$f"; done < names
  printf '\n'
} > "$work/fast-import.stream"

# ---- the peer's resources, registered once (and kept with WORK)
if [ -n "$peer" ] && [ ! -e "$work/peer.tpl.done" ]; then
  echo "# registering $n resources with the peer (untimed)..." >&2
  rm -rf "$work/peer.tpl"
  while read -r f; do
    "$peer" --data-dir "$work/peer.tpl" resource add "readproof://bench/docs/${f%.md}" \
      --source-type filesystem --path "docs/$f" --policy require_fresh >/dev/null
  done < names
  : > "$work/peer.tpl.done"
fi
echo "$n" > "$work/n"

# measure NAME CMD...: appends "wall cpu rss_kib" of one run to $work/NAME
measure() {
  local name=$1; shift
  /usr/bin/time -o "$work/t.$$" -f '%e %U %S %M' "$@" >/dev/null 2>"$work/err.$$" ||
    { echo "bench/write.sh: failed: $*" >&2; cat "$work/err.$$" >&2; exit 1; }
  awk '{ printf "%s %.3f %s\n", $1, $2 + $3, $4 }' "$work/t.$$" >> "$work/$name"
}

# measure10 NAME CMD...: like measure, for a command of a few milliseconds:
# ten runs in one shell (CMD gets {k} replaced by 1..10), wall and CPU
# divided by ten, so /usr/bin/time's 10 ms resolution does not hide it
measure10() {
  local name=$1; shift
  local script='for k in 1 2 3 4 5 6 7 8 9 10; do "${@//\{k\}/$k}" >/dev/null || exit 1; done'
  /usr/bin/time -o "$work/t.$$" -f '%e %U %S %M' bash -c "$script" bash "$@" 2>"$work/err.$$" ||
    { echo "bench/write.sh: failed: $*" >&2; cat "$work/err.$$" >&2; exit 1; }
  awk '{ printf "%.4f %.4f %s\n", $1 / 10, ($2 + $3) / 10, $4 }' "$work/t.$$" >> "$work/$name"
}

ours_round() { # $1: pair number
  local s="$work/ours.store"
  rm -rf "$s" "$work/o.json"
  "$rp" --store "$s" init >/dev/null
  measure ours.record "$rp" --store "$s" run --id "r$1" "${uris[@]}"
  measure ours.export "$rp" --store "$s" evidence export "r$1" --with-content --out "$work/o.json"
  measure ours.verify "$rp" --store "$s" evidence verify --offline "$work/o.json"
  measure ours.verifystore "$rp" --store "$s" evidence verify "$work/o.json"
  measure10 ours.run1 "$rp" --store "$s" run --id "one$1-{k}" "$one"
  measure10 ours.get "$rp" --store "$s" get "$one"
}

peer_round() {
  local d="$work/peer.data"
  rm -rf "$d" "$work/p.json"
  cp -r "$work/peer.tpl" "$d"
  measure peer.record "$peer" --data-dir "$d" run --id "r$1" "${uris[@]}"
  measure peer.export "$peer" --data-dir "$d" evidence export "r$1" --with-content --out "$work/p.json"
  measure peer.verify "$peer" --data-dir "$d" evidence verify --offline "$work/p.json"
  measure peer.verifystore "$peer" --data-dir "$d" evidence verify "$work/p.json"
  measure10 peer.run1 "$peer" --data-dir "$d" run --id "one$1-{k}" "$one"
  measure10 peer.get "$peer" --data-dir "$d" get "$one"
}

fi_round() {
  rm -rf "$work/fi.git"
  git init -q --bare "$work/fi.git"
  measure fastimport.record git --git-dir "$work/fi.git" fast-import --quiet < "$work/fast-import.stream"
}

for i in $(seq 1 "$pairs"); do
  echo "# pair $i of $pairs" >&2
  if [ $((i % 2)) = 1 ]; then
    ours_round "$i"; fi_round; [ -z "$peer" ] || peer_round "$i"
  else
    [ -z "$peer" ] || peer_round "$i"; fi_round; ours_round "$i"
  fi
done

# med FILE COLUMN: the median of one column (1 wall, 2 cpu, 3 rss)
med() {
  [ -s "$work/$1" ] || { echo "-"; return; }
  sort -g -k"$2","$2" "$work/$1" | awk -v c="$2" '{ v[NR] = $c } END { m = (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2; print m }'
}
# sum of the medians of two rows' column
sum() { awk -v a="$(med "$1" "$3")" -v b="$(med "$2" "$3")" 'BEGIN { if (a == "-" || b == "-") print "-"; else print a + b }'; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (a == "-" || b == "-" || b == 0) print "-"; else printf "%.3fx", a / b }'; }
ms() { awk -v s="$1" 'BEGIN { if (s == "-") print "-"; else if (s < 0.1) printf "%.1f ms", s * 1000; else printf "%.0f ms", s * 1000 }'; }
mib() { awk -v k="$1" 'BEGIN { if (k == "-") print "-"; else printf "%.0f MiB", k / 1024 }'; }

row() { # label ours-file peer-file target
  local ow oc pw pc
  ow=$(med "$2" 1); oc=$(med "$2" 2); pw=$(med "$3" 1); pc=$(med "$3" 2)
  printf '| %s | %s | %s | %s | %s | %s | %s |\n' "$1" "$(ms "$ow")" "$(ms "$oc")" "$(ms "$pw")" "$(ms "$pc")" "$(ratio "$oc" "$pc")" "$4"
}

echo
echo "| $n documents of 4 KiB, medians of $pairs | ours wall | ours CPU | peer wall | peer CPU | ours/peer CPU | target |"
echo "| --- | --- | --- | --- | --- | --- | --- |"
row "record a run, fresh store" ours.record peer.record "<= 0.06x"
row "record: git fast-import, one tree + one commit" fastimport.record /dev/null ""
printf '| record, ours / fast-import (CPU) | | %s | | | | <= 1.5x |\n' "$(ratio "$(med ours.record 2)" "$(med fastimport.record 2)")"
for side in ours peer; do
  for c in 1 2; do eval "${side}_ev$c=\$(sum $side.export $side.verify $c)"; done
done
printf '| evidence export --with-content + verify --offline | %s | %s | %s | %s | %s | <= 0.4x |\n' \
  "$(ms "$ours_ev1")" "$(ms "$ours_ev2")" "$(ms "$peer_ev1")" "$(ms "$peer_ev2")" "$(ratio "$ours_ev2" "$peer_ev2")"
row "evidence verify --offline" ours.verify peer.verify "<= 0.5x at 10,000"
row "evidence verify (against the store)" ours.verifystore peer.verifystore "<= 0.5x at 10,000"
row "1-document run --id" ours.run1 peer.run1 "< 10 ms"
row "get" ours.get peer.get "< 10 ms"
echo
echo "(The 1-document rows are ten calls right after each tool recorded, exported and verified $n documents: with the"
echo "peer alternating they also wait for the disk's writeback of that work. bench/latency.sh times the steady state.)"
echo
echo "| peak RSS, medians | ours | peer | ours/peer |"
echo "| --- | --- | --- | --- |"
for r in record export verify verifystore; do
  o=$(med ours.$r 3); p=$(med peer.$r 3)
  printf '| %s | %s | %s | %s |\n' "$r" "$(mib "$o")" "$(mib "$p")" "$(ratio "$o" "$p")"
done
printf '| fast-import | %s | | |\n' "$(mib "$(med fastimport.record 3)")"
echo
echo "# load after: $(uptime)"
