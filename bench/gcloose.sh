#!/usr/bin/env bash
# What does `readproof gc` cost where the garbage is loose? A store of 2,000
# recorded runs, packed by a first gc, plus about N loose unreachable
# objects (the runs, manifests and journal commits of N/4.3 runs whose refs
# are gone, each object its own file, young: as a writer that failed or an
# aborted run leaves them). Each build gc's its own copy of that store
# (`cp -a`, times kept), REPS times, alternating builds; printed per build:
# the median wall and CPU time (user+sys of readproof and every git it ran),
# and the objects after gc (du of objects/, KiB; loose objects; packs' KiB).
#
# Usage: bench/gcloose.sh [N] [REPS]   (defaults 20000 and 5; needs go and git)
# BUILDS="label=path ..." times those binaries (default: this tree's).
set -euo pipefail
n=${1:-20000}
reps=${2:-5}
here=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
(cd "$here" && go build -o "$work/mkstore" bench/mkstore.go)
if [ -z "${BUILDS:-}" ]; then
  (cd "$here" && CGO_ENABLED=${CGO_ENABLED:-0} go build -o "$work/readproof" .)
  BUILDS="this=$work/readproof"
fi
rp=${BUILDS%% *}; rp=${rp#*=}

s="$work/base.store"
addruns() { # DIR FIRST COUNT
  "$work/mkstore" -first "$2" -n "$3" -from "$(git -C "$1" rev-parse refs/heads/main)" | git -C "$1" fast-import --quiet
}
(cd "$work" && "$rp" init --store "$s" >/dev/null 2>&1 && rm -f readproof.toml)
addruns "$s" 0 2000
"$rp" --store "$s" gc >/dev/null
tip=$(git -C "$s" rev-parse refs/heads/main)
packed=$(ls "$s"/objects/pack/*.pack)
addruns "$s" 2000 $(( n * 10 / 43 ))
git -C "$s" for-each-ref --format='delete %(refname)' refs/tags/readproof/runs |
  awk '{ split($2, p, "run-"); if (p[2] + 0 >= 2000) print }' | git -C "$s" update-ref --stdin
git -C "$s" update-ref refs/heads/main "$tip"
for p in "$s"/objects/pack/*.pack; do # the new runs' pack becomes loose objects
  echo "$packed" | grep -qxF "$p" && continue
  mv "$p" "${p%.pack}.idx" "$work/"
  git -C "$s" unpack-objects -q < "$work/$(basename "$p")"
  rm -f "$work/$(basename "$p")" "$work/$(basename "${p%.pack}.idx")"
done
echo "readproof gc, 2,000 runs packed + $(git -C "$s" count-objects | cut -d' ' -f1) loose unreachable objects ($(du -sk "$s/objects" | cut -f1) KiB), git $(git --version | cut -d' ' -f3); load $(uptime | sed 's/.*load average: //')"

median() { sort -n | awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] }'; }
for i in $(seq "$reps"); do
  for b in $BUILDS; do
    label=${b%%=*}; bin=${b#*=}
    r="$work/run.store"
    rm -rf "$r"; cp -a "$s" "$r"
    t0=$(date +%s%N)
    /usr/bin/time -f "%U %S" -o "$work/cpu" "$bin" --store "$r" gc >/dev/null
    t1=$(date +%s%N)
    echo "$(( (t1 - t0) / 1000000 )) $(awk '{ printf "%d", ($1 + $2) * 1000 }' "$work/cpu")" >> "$work/t.$label"
    echo "$(du -sk "$r/objects" | cut -f1) $(git --git-dir "$r" count-objects -v | awk -F': ' '/^count/ {c=$2} /^size-pack/ {p=$2} END {print c, p}')" > "$work/b.$label"
  done
done
for b in $BUILDS; do
  label=${b%%=*}
  read -r kib loose pk < "$work/b.$label"
  echo "$label: wall $(cut -d' ' -f1 "$work/t.$label" | median) ms, CPU $(cut -d' ' -f2 "$work/t.$label" | median) ms (median of $reps); after gc $kib KiB, $loose loose, packs $pk KiB"
done
echo "load $(uptime | sed 's/.*load average: //')"
