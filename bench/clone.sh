#!/usr/bin/env bash
# Issue 14, acceptance 3: `readproof clone` of N runs against `git clone
# --mirror` of the same repository, from a path and from `git daemon` on
# 127.0.0.1, and `readproof push` of P new runs against stock `git push
# --atomic` of the same refs, from a store that was never gc'd (its new
# objects loose). Medians of REPEAT (3) alternating runs; the ratios are
# checked against the targets (clone <= 1.5x, push <= 1.3x; exit 1 above).
# Stores are built with git fast-import (bench/mkstore.go), not one CLI
# process per run.
# Usage: bench/clone.sh [N] [REPEAT] [P]   (default 2000 3 1000)
# Quick check of the script: bench/clone.sh 200 3 100
# SOURCE=loose explodes the source store's pack into loose objects (a
# store nobody gc'd); the default is one pack.
set -euo pipefail
n=${1:-2000}
repeat=${2:-3}
pn=${3:-1000}
here=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d)
dpid=""
trap '[ -n "$dpid" ] && kill "$dpid" 2>/dev/null; rm -rf "$work"' EXIT
CGO_ENABLED=${CGO_ENABLED:-0} go build -o "$work/readproof" "$here"
cp "$work/readproof" "$work/readproof.copy" && mv "$work/readproof.copy" "$work/readproof" # time a copy, not the linker's file (docs/startup.md)
rp="$work/readproof"
(cd "$here" && go build -o "$work/mkstore" bench/mkstore.go)

ms() { date +%s%N; }
median() { sort -n | awk '{a[NR]=$1} END {print (NR%2) ? a[(NR+1)/2] : int((a[NR/2]+a[NR/2+1])/2)}'; }
# timed LABEL CMD...: runs CMD quietly, appends its wall time (ms) to $work/t.LABEL
timed() {
  local label=$1; shift
  local t0 t1; t0=$(ms)
  "$@" >/dev/null 2>"$work/err" || { echo "failed: $*" >&2; cat "$work/err" >&2; exit 2; }
  t1=$(ms); echo $(( (t1 - t0) / 1000000 )) >> "$work/t.$label"
}
med() { median < "$work/t.$1"; }
# newstore DIR FIRST COUNT: a readproof store with runs FIRST..FIRST+COUNT-1
newstore() {
  (cd "$work" && "$rp" init --store "$1" >/dev/null 2>&1 && rm -f readproof.toml)
  addruns "$1" "$2" "$3"
}
addruns() {
  "$work/mkstore" -first "$2" -n "$3" -from "$(git -C "$1" rev-parse refs/heads/main)" | git -C "$1" fast-import --quiet
}
# loosen DIR: every packed object of DIR becomes a loose object (as a store
# that was never gc'd holds its recent writes)
loosen() {
  mkdir -p "$work/packs"
  for p in "$1"/objects/pack/*.pack; do
    [ -e "$p" ] || continue
    mv "$p" "${p%.pack}.idx" "$work/packs/"
    git -C "$1" unpack-objects -q < "$work/packs/$(basename "$p")"
  done
  rm -rf "$work/packs"
}

mkdir -p "$work/srv"
src="$work/srv/src.git"
newstore "$src" 0 "$n"
[ "${SOURCE:-pack}" = loose ] && loosen "$src"
port=$(( 20000 + RANDOM % 20000 ))
git daemon --base-path="$work/srv" --export-all --reuseaddr --enable=receive-pack \
  --listen=127.0.0.1 --port="$port" "$work/srv" 2>"$work/daemon.err" &
dpid=$!
for _ in $(seq 50); do git ls-remote "git://127.0.0.1:$port/src.git" >/dev/null 2>&1 && break; sleep 0.1; done
url="git://127.0.0.1:$port/src.git"

for i in $(seq 1 "$repeat"); do
  rm -rf "$work/c"*
  timed rp_path "$rp" clone "$src" "$work/c1"
  timed git_path git clone -q --mirror "$src" "$work/c2"
  timed git_nolocal git clone -q --mirror --no-local "$src" "$work/c3"
  timed rp_daemon "$rp" clone "$url" "$work/c4"
  timed git_daemon git clone -q --mirror "$url" "$work/c5"
done
[ "$(git -C "$work/c4" for-each-ref refs/tags/readproof/runs/ | wc -l)" -eq "$n" ] || { echo "clone lacks runs" >&2; exit 2; }

# push: the server holds runs 0..P-1, the local store those and P more,
# written without a gc (loose objects)
tmpl="$work/push-template.git"
newstore "$tmpl" 0 "$pn"
local="$work/local"
"$rp" clone "$tmpl" "$local" >/dev/null 2>&1
addruns "$local" "$pn" "$pn"
loosen "$local"
"$rp" --store "$local" remote add d "git://127.0.0.1:$port/push.git" >/dev/null 2>&1
restore() { rm -rf "$work/srv/push.git"; cp -a "$tmpl" "$work/srv/push.git"; sync; }
for i in $(seq 1 "$repeat"); do
  restore
  timed rp_push "$rp" --store "$local" push d
  restore
  timed git_push git -C "$local" push -q --atomic "git://127.0.0.1:$port/push.git" \
    'refs/tags/readproof/runs/*:refs/tags/readproof/runs/*' refs/heads/main:refs/heads/main
done

ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", a / b }'; }
rpp=$(med rp_path); gp=$(med git_path); gn=$(med git_nolocal); rpd=$(med rp_daemon); gd=$(med git_daemon)
rpu=$(med rp_push); gpu=$(med git_push)
echo "load: $(uptime)"
echo "source: $n runs ($(git -C "$src" count-objects -v | awk '/^count:/{l=$2} /^in-pack:/{p=$2} END {print l " loose, " p " packed objects"}')); medians of $repeat, ms"
printf '| %-52s | %8s | %8s | %6s |\n' "what" "readproof" "git" "ratio"
printf '| %-52s | %8s | %8s | %6s |\n' "---" "---" "---" "---"
printf '| %-52s | %8s | %8s | %6s |\n' "clone from a path (git: --mirror, local hardlinks)" "$rpp" "$gp" "$(ratio "$rpp" "$gp")"
printf '| %-52s | %8s | %8s | %6s |\n' "clone from a path (git: --mirror --no-local)" "$rpp" "$gn" "$(ratio "$rpp" "$gn")"
printf '| %-52s | %8s | %8s | %6s |\n' "clone from git daemon (git: --mirror)" "$rpd" "$gd" "$(ratio "$rpd" "$gd")"
printf '| %-52s | %8s | %8s | %6s |\n' "push of $pn new runs, loose, to git daemon" "$rpu" "$gpu" "$(ratio "$rpu" "$gpu")"
for l in rp_path git_path git_nolocal rp_daemon git_daemon rp_push git_push; do echo "$l: $(tr '\n' ' ' < "$work/t.$l")"; done
fail=0
awk -v a="$rpp" -v b="$gn" 'BEGIN { exit !(a > 1.5 * b) }' && { echo "OVER: clone from a path > 1.5x git clone --mirror --no-local"; fail=1; }
awk -v a="$rpd" -v b="$gd" 'BEGIN { exit !(a > 1.5 * b) }' && { echo "OVER: clone from git daemon > 1.5x"; fail=1; }
awk -v a="$rpu" -v b="$gpu" 'BEGIN { exit !(a > 1.3 * b) }' && { echo "OVER: push > 1.3x"; fail=1; }
exit $fail
