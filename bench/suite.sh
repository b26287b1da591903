#!/usr/bin/env bash
# Times the whole test suite as issue 11 (acceptance 5) measures it: `go clean
# -testcache && go test ./...` in this tree against a base revision (default
# 9dcf8c3, the tree the issue was filed on), in alternating pairs, with a warm
# build cache for both and TMPDIR left as the caller has it.
#
# Usage: bench/suite.sh [PAIRS] [BASE]     (PAIRS 2, BASE 9dcf8c3)
#
# The base is checked out as a detached git worktree under a temporary
# directory, removed at the end. Each line prints wall, user and system time;
# the load is printed before and after each pair. Figures from a busy machine
# compare only with each other; a disk-heavy neighbour slows a tree whose
# tests write to disk more than one whose tests write to tmpfs.
set -euo pipefail
pairs=${1:-2}
base=${2:-9dcf8c3}
here=$(cd "$(dirname "$0")/.." && pwd)
[ -x /usr/bin/time ] || { echo "bench/suite.sh: needs GNU time at /usr/bin/time" >&2; exit 1; }
work=$(mktemp -d)
trap 'git -C "$here" worktree remove --force "$work/base" >/dev/null 2>&1 || true; rm -rf "$work"' EXIT
git -C "$here" worktree add --detach "$work/base" "$base" >/dev/null 2>&1 ||
  { echo "bench/suite.sh: cannot check out $base" >&2; exit 1; }

# Each suite runs in a process group of its own, which is ended afterwards:
# the base tree's adapters tests leave two git-daemon processes listening
# (issue 11, fixed since), which would otherwise pile up across pairs.
one() { # DIR LABEL
  (cd "$1" && go clean -testcache &&
    setsid -w sh -c 'echo $$ > "$0"; exec "$@"' "$work/pgid" \
      /usr/bin/time -o "$work/t" -f "$2 %e s wall, %U s user, %S s sys" go test ./... >"$work/$2.out" 2>&1) ||
    { kept=$(mktemp "${TMPDIR:-/tmp}/suite-$2-failed.XXXXXX.log") && cp "$work/$2.out" "$kept"
      echo "$2: go test failed (whole log kept in $kept):" >&2
      grep -v '^ok\|no test files' "$work/$2.out" | head -20 >&2; }
  kill -- "-$(cat "$work/pgid")" 2>/dev/null || true
  cat "$work/t"
}
# warm the build cache for both trees (compiles and links outside the timing)
(cd "$work/base" && go test -count=1 -run '^$' ./... >/dev/null 2>&1) || true
(cd "$here" && go test -count=1 -run '^$' ./... >/dev/null 2>&1) || true
echo "load before: $(uptime)"
for i in $(seq 1 "$pairs"); do
  if [ $((i % 2)) = 1 ]; then one "$work/base" base; one "$here" head; else one "$here" head; one "$work/base" base; fi
  echo "load: $(uptime)"
done
