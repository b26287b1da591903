#!/usr/bin/env bash
# Issue 14, acceptance 4: after N single-run writes with no `gc`, the store
# holds at most 2x the bytes it holds after `gc`, and the maintenance work a
# write does (packing small packs and loose objects and rolling packs up,
# gitstore/maintain.go and maintain_pack.go) costs under 5 ms amortized.
# (A maintained store's single-run write makes a small pack; with gc.auto 0
# it leaves its objects loose, as git does: docs/store-format.md.)
#
# The bytes are those of the whole store (objects, refs and the rest), and
# of its objects alone.
#
# Two stores record the same N runs, one document edited before each run, in
# turns (so a busy machine slows both alike): "auto" as readproof stores are
# made, "off" with automatic maintenance turned off (git config gc.auto 0).
# The difference of their total write times, divided by N, is what
# maintenance adds to a write. Then the auto store is copied and gc'd, and
# the disk use of the objects (du, 4 KiB blocks: what a loose object really
# costs) is compared.
#
# Usage: bench/maintain.sh [N]   (default 2000; needs go and git; writes only
# under a temp dir, MAINTAIN_KEEP=1 keeps it)
set -euo pipefail
n=${1:-2000}
here=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d)
if [ "${MAINTAIN_KEEP:-}" = 1 ]; then echo "work directory: $work"; else trap 'rm -rf "$work"' EXIT; fi
CGO_ENABLED=${CGO_ENABLED:-0} go build -o "$work/readproof" "$here"
cp "$work/readproof" "$work/readproof.copy" && mv "$work/readproof.copy" "$work/readproof" # time a copy, not the linker's file (docs/startup.md)
rp="$work/readproof"
cd "$work"
mkdir docs
printf 'version = 1\n\n[[resource]]\nuri = "readproof://bench/doc"\nsource = { type = "filesystem", path = "docs/doc.md" }\n' > readproof.toml
head -c 3000 /dev/urandom | base64 -w 76 > docs/doc.md
"$rp" --store auto.store init >/dev/null
"$rp" --store off.store init >/dev/null
git --git-dir off.store config gc.auto 0

ns() { date +%s%N; }
cpu() { times > "$work/times"; } # must run in this shell: times reports its children
cpu_val() { # cumulative user+sys CPU of finished children at the last cpu, in ms
  awk 'NR == 2 { s = 0
    for (i = 1; i <= 2; i++) { split($i, b, "m"); s += b[1] * 60 + substr(b[2], 1, length(b[2]) - 1) }
    printf "%d", s * 1000 }' "$work/times"
}
wall_auto=0 wall_off=0 cpu_auto=0 cpu_off=0 max_auto=0
echo "load before: $(uptime | sed 's/.*load average: //')"
for i in $(seq 1 "$n"); do
  # edit one line of the document, as a changing source would
  sed -i "1s/.*/edit $i $RANDOM/" docs/doc.md
  for s in auto off; do
    cpu; c0=$(cpu_val); t0=$(ns)
    "$rp" --store $s.store run --id "r$i" readproof://bench/doc >/dev/null 2>&1
    t1=$(ns); cpu; c1=$(cpu_val)
    d=$(( (t1 - t0) / 1000 ))
    if [ $s = auto ]; then
      wall_auto=$((wall_auto + d)); cpu_auto=$((cpu_auto + c1 - c0)); (( d > max_auto )) && max_auto=$d
    else
      wall_off=$((wall_off + d)); cpu_off=$((cpu_off + c1 - c0))
    fi
  done
done
echo "load after:  $(uptime | sed 's/.*load average: //')"

kib() { du -sk "$1/objects" | cut -f1; }
objects() { git --git-dir "$1" count-objects -v | awk -F': ' '/^(count|packs|in-pack)/ {printf "%s %s  ", $1, $2}'; }
cp -a auto.store gc.store
"$rp" --store gc.store gc >/dev/null
a=$(kib auto.store) o=$(kib off.store) g=$(kib gc.store)
echo "objects on disk after $n single-run writes:"
echo "  maintained (auto): ${a} KiB   $(objects auto.store)"
echo "  no maintenance:    ${o} KiB   $(objects off.store)"
echo "  auto, then gc:     ${g} KiB   $(objects gc.store)"
awk -v a="$a" -v g="$g" 'BEGIN { printf "  auto / gc: %.2fx\n", a / g }'
# The whole store, refs included: a loose ref is a file (a 4 KiB block on
# most file systems) and each single-run write leaves its run's ref.
store() { du -sk "$1" | cut -f1; }
looserefs() { find "$1/refs" -type f ! -name '*.lock' | wc -l; }
sa=$(store auto.store) so=$(store off.store) sg=$(store gc.store)
echo "the whole store on disk (objects, refs, packed-refs, config):"
echo "  maintained (auto): ${sa} KiB   loose refs $(looserefs auto.store)"
echo "  no maintenance:    ${so} KiB   loose refs $(looserefs off.store)"
echo "  auto, then gc:     ${sg} KiB   loose refs $(looserefs gc.store)"
awk -v a="$sa" -v g="$sg" 'BEGIN { printf "  auto / gc: %.2fx   (target <= 2x)\n", a / g }'
awk -v wa="$wall_auto" -v wo="$wall_off" -v ca="$cpu_auto" -v co="$cpu_off" -v n="$n" -v mx="$max_auto" 'BEGIN {
  printf "write time, mean per run: auto %.1f ms wall / %.1f ms cpu, off %.1f ms wall / %.1f ms cpu\n", wa/n/1000, ca/n, wo/n/1000, co/n
  printf "maintenance per write (auto - off): %.2f ms wall, %.2f ms cpu   (target < 5 ms); slowest auto write %.0f ms\n", (wa-wo)/n/1000, (ca-co)/n, mx/1000 }'
"$rp" --store auto.store verify >/dev/null && echo "auto store verifies"
