#!/usr/bin/env bash
# Does `readproof gc` make a store larger? A store holds N recorded runs and N
# more runs whose refs are gone (aborted or failed runs, superseded writes):
# their objects are unreachable and young (younger than the grace period, so
# gc keeps them). Before session 24 git gc's `repack -A` wrote every one of
# them out of its pack as a loose file; with cruft packs they stay packed.
#
# Three stores, each gc'd twice with the default grace (two weeks):
#   clean   N runs, nothing unreachable (gc's wall time on a plain store)
#   packed  N runs + N unreachable runs, all in the pack fast-import wrote
#   loose   the same, every object a loose file (a store never packed)
# For each: objects on disk (du of objects/, KiB: the commit-graph gc writes
# included), loose objects and packs (git count-objects -v; the packs'
# KiB), before and after each gc, and gc's wall time.
#
# Usage: bench/gcgrow.sh [N]   (default 2000; needs go and git)
# READPROOF=path/to/readproof compares another build (e.g. an older one).
set -euo pipefail
n=${1:-2000}
here=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
if [ -n "${READPROOF:-}" ]; then
  cp "$READPROOF" "$work/readproof"
else
  CGO_ENABLED=${CGO_ENABLED:-0} go build -o "$work/readproof" "$here"
fi
rp="$work/readproof"
(cd "$here" && go build -o "$work/mkstore" bench/mkstore.go)

ms() { date +%s%N; }
addruns() { # DIR FIRST COUNT
  "$work/mkstore" -first "$2" -n "$3" -from "$(git -C "$1" rev-parse refs/heads/main)" | git -C "$1" fast-import --quiet
}
newstore() { # DIR GARBAGE(0/1)
  (cd "$work" && "$rp" init --store "$1" >/dev/null 2>&1 && rm -f readproof.toml)
  addruns "$1" 0 "$n"
  if [ "$2" = 1 ]; then
    local tip; tip=$(git -C "$1" rev-parse refs/heads/main)
    addruns "$1" "$n" "$n"
    # the later runs go: their refs deleted, the journal back where it was
    git -C "$1" for-each-ref --format='delete %(refname)' refs/tags/readproof/runs |
      awk -v n="$n" '{ split($2, p, "run-"); if (p[2] + 0 >= n) print }' | git -C "$1" update-ref --stdin
    git -C "$1" update-ref refs/heads/main "$tip"
  fi
}
loosen() { # DIR: every packed object becomes a loose file
  mkdir -p "$work/packs"
  for p in "$1"/objects/pack/*.pack; do
    [ -e "$p" ] || continue
    mv "$p" "${p%.pack}.idx" "$work/packs/"
    git -C "$1" unpack-objects -q < "$work/packs/$(basename "$p")"
  done
  rm -rf "$work/packs"
}
state() { # DIR
  local kib; kib=$(du -sk "$1/objects" | cut -f1)
  git --git-dir "$1" count-objects -v | awk -F': ' -v kib="$kib" '
    /^count/ {c=$2} /^in-pack/ {p=$2} /^packs/ {k=$2} /^size-pack/ {sp=$2}
    END { printf "%7d KiB  loose %6d  packed %6d  packs %d (%d KiB)", kib, c, p, k, sp }'
}
echo "readproof gc on stores of $n runs (git $(git --version | cut -d' ' -f3)); load $(uptime | sed 's/.*load average: //')"
for kind in clean packed loose; do
  s="$work/$kind.store"
  newstore "$s" "$([ $kind = clean ] && echo 0 || echo 1)"
  [ $kind = loose ] && loosen "$s"
  echo "$kind:"
  echo "  before gc:    $(state "$s")"
  for i in 1 2; do
    t0=$(ms)
    "$rp" --store "$s" gc >/dev/null
    t1=$(ms)
    echo "  after gc $i:   $(state "$s")   gc $(( (t1 - t0) / 1000000 )) ms"
  done
  git --git-dir "$s" fsck --strict --no-progress >/dev/null 2>"$work/fsck" || { echo "git fsck failed:"; cat "$work/fsck"; exit 1; }
done
