#!/usr/bin/env bash
# Issue 14, acceptance 3 (first half): `readproof clone` of a store with N
# runs against `git clone --mirror` of the same repository, from a path and
# from `git daemon` on 127.0.0.1. The runs are made as in bench/scale.sh
# (bench/scalegen.go, one git fast-import), then the source store is gc'd as a
# shared remote would be.
#
# Usage: bench/clone.sh [N] [REPEAT]   (default 2000 runs, best of 3). Needs go
# and git (git daemon for the second half); writes only under a temp dir
# (CLONE_KEEP=1 keeps it).
set -euo pipefail
n=${1:-2000}
repeat=${2:-3}
here=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d)
daemon_pid=
cleanup() {
  [ -n "$daemon_pid" ] && kill "$daemon_pid" 2>/dev/null || true
  [ "${CLONE_KEEP:-}" = 1 ] || rm -rf "$work"
}
trap cleanup EXIT
[ "${CLONE_KEEP:-}" = 1 ] && echo "work directory: $work"
go build -o "$work/readproof" "$here"
go build -o "$work/scalegen" "$here/bench/scalegen.go"
rp="$work/readproof"
cd "$work"
mkdir docs
{ echo "version = 1"; for i in 1 2 3; do
    head -c 3000 /dev/urandom | base64 -w 76 > "docs/d$i.md"
    printf '\n[[resource]]\nuri = "readproof://bench/docs/d%s"\nsource = { type = "filesystem", path = "docs/d%s.md" }\n' "$i" "$i"
  done; } > readproof.toml
"$rp" --store src.git init >/dev/null
"$rp" --store src.git run --id t0 readproof://bench/docs/d1 readproof://bench/docs/d2 readproof://bench/docs/d3 >/dev/null
"$work/scalegen" -store src.git -template t0 -n "$n"
"$rp" --store src.git gc >/dev/null
echo "source: $n runs, $(git --git-dir src.git for-each-ref | wc -l) refs, $(du -sk src.git | cut -f1) KiB"

ms() { date +%s%N; }
best() { # LABEL CMD...: best wall time of $repeat runs, each into a fresh target
  local label=$1 b=999999999 i t0 t1 d; shift
  for i in $(seq 1 "$repeat"); do
    rm -rf dst
    t0=$(ms); "$@" >/dev/null 2>"$work/err" || { echo "failed: $*" >&2; cat "$work/err" >&2; exit 1; }; t1=$(ms)
    d=$(( (t1 - t0) / 1000000 )); (( d < b )) && b=$d
  done
  printf '%-40s %6d ms\n' "$label" "$b"
  echo "$b"  > "$work/last"
}
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "  readproof / git: %.2fx (target <= 1.5x)\n", a / b }'; }

echo "load: $(uptime | sed 's/.*load average: //')"
best "git clone --mirror (path)" git clone --quiet --mirror "$work/src.git" dst; g=$(cat last)
best "readproof clone (path)" "$rp" clone "$work/src.git" dst; r=$(cat last)
ratio "$r" "$g"

if git daemon --help >/dev/null 2>&1; then
  port=$(( 20000 + RANDOM % 20000 ))
  git daemon --reuseaddr --listen=127.0.0.1 --port="$port" --export-all --base-path="$work" "$work" >/dev/null 2>&1 &
  daemon_pid=$!
  sleep 1
  best "git clone --mirror (git daemon)" git clone --quiet --mirror "git://127.0.0.1:$port/src.git" dst; g=$(cat last)
  best "readproof clone (git daemon)" "$rp" clone "git://127.0.0.1:$port/src.git" dst; r=$(cat last)
  ratio "$r" "$g"
fi
echo "load: $(uptime | sed 's/.*load average: //')"
