#!/usr/bin/env bash
# Issue 14, acceptance 5: how clone, pull, push and git ls-remote grow with
# the number of runs. For each N in SIZES (default "10000 100000") a store
# of N runs is built with git fast-import (bench/mkstore.go) and served by
# git daemon on 127.0.0.1; then, once each (these are minutes, not
# medians): git ls-remote (time, bytes), git clone --mirror, readproof clone,
# readproof pull and push with nothing new, and a pull of 100 new runs.
# SYNTH=M adds a synthetic row: the largest store's refs copied into
# packed-refs M times over (refs/tags/readproof/runs/synK-<id> naming the
# same manifests), so the ref advertisement and the ref store have M x N
# refs while the objects stay those of N runs. readproof clone refuses such
# names, so that row's pulls and push start from the last row's clone with
# its refs copied the same way, and it has no clone figure.
# Usage: SIZES="10000 100000" SYNTH=10 bench/scale.sh   (quick: SIZES=1000 bench/scale.sh)
set -euo pipefail
sizes=${SIZES:-"10000 100000"}
here=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d)
dpid=""
trap '[ -n "$dpid" ] && kill "$dpid" 2>/dev/null; rm -rf "$work"' EXIT
CGO_ENABLED=${CGO_ENABLED:-0} go build -o "$work/readproof" "$here"
cp "$work/readproof" "$work/readproof.copy" && mv "$work/readproof.copy" "$work/readproof" # time a copy, not the linker's file (docs/startup.md)
rp="$work/readproof"
(cd "$here" && go build -o "$work/mkstore" bench/mkstore.go)
ms() { date +%s%N; }
t() { local t0; t0=$(ms); "$@" >/dev/null 2>"$work/err" || { echo "failed: $*" >&2; tail -3 "$work/err" >&2; echo -1; return; }; echo $(( ($(ms) - t0) / 1000000 )); }
mkdir -p "$work/srv"
port=$(( 20000 + RANDOM % 20000 ))
git daemon --base-path="$work/srv" --export-all --reuseaddr --listen=127.0.0.1 --port="$port" "$work/srv" 2>/dev/null &
dpid=$!
sleep 1
echo "load: $(uptime)"
printf '| %9s | %9s | %9s | %9s | %9s | %9s | %9s | %9s | %9s |\n' runs refs ls-remote "ls bytes" "git clone" "rp clone" "pull =" "push =" "pull +100"
printf '| %9s | %9s | %9s | %9s | %9s | %9s | %9s | %9s | %9s |\n' --- --- "ms" "" "ms" "ms" "ms" "ms" "ms"
row() { # row N REPO [FIRST]: with FIRST, no clone: the pulls start from $work/c as it is, and the new runs' ids from FIRST
  local n=$1 name=$2 first=${3:-} url="git://127.0.0.1:$port/$2"
  local refs lsb lst gc rc pu pp pn
  refs=$(git -C "$work/srv/$name" for-each-ref | wc -l)
  lst=$(t git ls-remote "$url")
  lsb=$(git ls-remote "$url" | wc -c)
  rm -rf "$work/m"
  gc=$(t git clone -q --mirror "$url" "$work/m")
  if [ -z "$first" ]; then
    rm -rf "$work/c"
    rc=$(t "$rp" clone "$url" "$work/c")
  else
    rm -rf "$work/m"
    rc=n/a
    git -C "$work/c" config remote.origin.url "$url"
  fi
  pu=$(t "$rp" --store "$work/c" pull)
  pp=$(t "$rp" --store "$work/c" push)
  "$work/mkstore" -first "${first:-9000000}" -n 100 -from "$(git -C "$work/srv/$name" rev-parse refs/heads/main)" | git -C "$work/srv/$name" fast-import --quiet
  pn=$(t "$rp" --store "$work/c" pull)
  printf '| %9s | %9s | %9s | %9s | %9s | %9s | %9s | %9s | %9s |\n' "$n" "$refs" "$lst" "$lsb" "$gc" "$rc" "$pu" "$pp" "$pn"
}
last=""
for n in $sizes; do
  d="$work/srv/s$n.git"
  (cd "$work" && "$rp" init --store "$d" >/dev/null 2>&1 && rm -f readproof.toml)
  "$work/mkstore" -n "$n" -from "$(git -C "$d" rev-parse refs/heads/main)" | git -C "$d" fast-import --quiet
  git -C "$d" pack-refs --all
  row "$n" "s$n.git"
  last=$n
done
if [ -n "${SYNTH:-}" ] && [ -n "$last" ]; then
  d="$work/srv/s$last.git"; s="$work/srv/synth.git"
  cp -a "$d" "$s"
  git -C "$s" pack-refs --all
  { grep -v '^#' "$s/packed-refs" | grep -v '^\^'
    for k in $(seq 2 "$SYNTH"); do
      grep ' refs/tags/readproof/runs/run-' "$d/packed-refs" | sed "s# refs/tags/readproof/runs/run-# refs/tags/readproof/runs/syn$k-#"
    done; } | LC_ALL=C sort -k2 > "$work/pr"
  { echo '# pack-refs with: sorted '; cat "$work/pr"; } > "$s/packed-refs"
  # readproof clone refuses the synthetic names (a run ref whose manifest records another run id, and no
  # rename on the journal: docs/sync.md), so the pulls and the push start from the last row's clone, its
  # run refs and tracking run refs copied the same way: what a clone of this remote would hold.
  c="$work/c"
  git -C "$c" pack-refs --all
  grep ' refs/tags/readproof/runs/run-' "$d/packed-refs" | sed 's#.* refs/tags/readproof/runs/run-##' > "$work/ids"
  { grep -v '^#' "$c/packed-refs" | grep -v '^\^'
    for k in $(seq 2 "$SYNTH"); do
      awk -v k="$k" 'NR == FNR { id[$1] = 1; next }
        match($2, /^refs\/(tags\/readproof|readproof-remotes\/origin)\/runs\/run-/) && (substr($2, RLENGTH + 1) in id) {
          print $1, substr($2, 1, RLENGTH - 4) "syn" k "-" substr($2, RLENGTH + 1) }' "$work/ids" "$c/packed-refs"
    done; } | LC_ALL=C sort -k2 > "$work/pr"
  { echo '# pack-refs with: sorted '; cat "$work/pr"; } > "$c/packed-refs"
  row "$((last * SYNTH)) synth" synth.git 9100000
fi
