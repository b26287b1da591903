#!/usr/bin/env bash
# Peak memory of listing and exporting a session's receipts as the session
# grows (docs/scaling.md, session 30): builds a project whose store holds
# one committed run (r1, one document) and one session of N receipts of
# that run (bench/receiptsgen.go through git fast-import, sealed with a
# fresh receipt key), then runs `receipts list big` (the table and
# --json) and `evidence export r1` ROUNDS times with each binary,
# alternating which goes first, and prints each run's peak RSS (GNU time's
# maximum resident set size: the Go heap and the pages of the store's
# mapped pack and index), the medians, and the load before and after. Not
# a timed test: the numbers are for docs/scaling.md.
#
# Usage: bench/receiptsmem.sh N [ROUNDS] [BEFORE-BINARY]
#
# The binary of this tree is built afresh; BEFORE-BINARY (optional) is
# another readproof built side by side (e.g. from a `git worktree add` of
# main with `go build -o`), measured in alternation with it. The project is
# kept in WORK (default $TMPDIR/receiptsmem) per N: remove it to build it again.
set -euo pipefail
n=${1:?usage: bench/receiptsmem.sh N [ROUNDS] [BEFORE-BINARY]}
rounds=${2:-3}
before=${3:-}
here=$(cd "$(dirname "$0")/.." && pwd)
work=${WORK:-${TMPDIR:-/tmp}/receiptsmem}
w=$work/n$n
mkdir -p "$w/home" "$w/p"
export HOME=$w/home XDG_CONFIG_HOME=$w/home/.config
CGO_ENABLED=${CGO_ENABLED:-0} go build -o "$work/readproof" "$here"
rp=$work/readproof
key=$w/receipts.key
cd "$w/p" # readproof init writes its readproof.toml here
if [ ! -e "$w/done" ]; then
  rm -rf "$w/p/.readproof" "$key"
  printf 'version = 1\n\n[[resource]]\nuri = "readproof://bench/doc"\nsource = { type = "filesystem", path = "doc.md" }\n' > readproof.toml
  echo "a document" > doc.md
  "$rp" init >/dev/null
  "$rp" run --id r1 readproof://bench/doc >/dev/null
  "$rp" receipts key init --key "$key" >/dev/null 2>&1
  (cd "$here" && go run bench/receiptsgen.go -key "$key" -session big -run r1 -n "$n") |
    git --git-dir="$w/p/.readproof" fast-import --quiet --active-branches=33
  : > "$w/done"
fi
echo "# bench/receiptsmem.sh: $n receipts, $rounds rounds, $(date -u +%FT%TZ)"
echo "# load before: $(cut -d' ' -f1-3 /proc/loadavg)"
peak() { # BINARY ARGS...: prints the peak RSS in MB
  /usr/bin/time -o "$w/rss" -f '%M' "$@" >/dev/null 2>"$w/err" || { cat "$w/err" >&2; return 1; }
  awk '{printf "%.0f", $1/1024}' "$w/rss"
}
median() { sort -n | awk '{a[NR]=$1} END {print (NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2)}'; }
export READPROOF_RECEIPTS_KEY=$key
for what in table json export; do
  case $what in
    table) args=(receipts list big) ;;
    json) args=(receipts list --json big) ;;
    export) args=(evidence export r1) ;;
  esac
  a=() b=()
  for i in $(seq "$rounds"); do
    if [ -n "$before" ] && [ $((i % 2)) -eq 1 ]; then a+=("$(peak "$before" "${args[@]}")"); fi
    b+=("$(peak "$rp" "${args[@]}")")
    if [ -n "$before" ] && [ $((i % 2)) -eq 0 ]; then a+=("$(peak "$before" "${args[@]}")"); fi
  done
  if [ -n "$before" ]; then
    echo "$what before MB: ${a[*]} median $(printf '%s\n' "${a[@]}" | median)"
  fi
  echo "$what this tree MB: ${b[*]} median $(printf '%s\n' "${b[@]}" | median)"
done
echo "# load after: $(cut -d' ' -f1-3 /proc/loadavg)"
