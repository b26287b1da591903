#!/usr/bin/env bash
# Fuzzes a rotating subset of the fuzz targets: those whose index in the
# sorted list (bench/fuzzlib.sh) is congruent to the day of the year modulo
# FUZZ_K (default 7), so every target runs at least once a week. Each runs
# FUZZ_TIME (default 10s); no target is started once the run has used
# FUZZ_BUDGET seconds (default 120) minus one target's time, so the whole
# step stays under about two minutes; the skipped ones are listed.
# A failing input is written under PKG/testdata/fuzz/NAME/ by go test and
# fails the step; commit it once the bug is fixed.
#
#   .ci/fuzz-rotate.sh                 # today's subset
#   FUZZ_DAY=3 FUZZ_TIME=2s .ci/fuzz-rotate.sh
set -euo pipefail
cd "$(dirname "$0")/.."
. bench/fuzzlib.sh

k=${FUZZ_K:-7}
time=${FUZZ_TIME:-10s}
budget=${FUZZ_BUDGET:-120}
day=${FUZZ_DAY:-$(date -u +%j)}
day=$((10#$day))
logs=${FUZZ_LOG_DIR:-${TMPDIR:-/tmp}/fuzz-rotate-logs}
mkdir -p "$logs"
secs=${time%s}
case $secs in *[!0-9]*) secs=10 ;; esac

mapfile -t all < <(fuzz_targets)
echo "== fuzz: ${#all[@]} targets, subset $((day % k)) of $k (day $day), $time each, budget ${budget}s"
start=$SECONDS
failed=0
summary=()
for i in "${!all[@]}"; do
  [ $((i % k)) -eq $((day % k)) ] || continue
  read -r dir name <<<"${all[$i]}"
  if [ $((SECONDS - start + secs + 5)) -gt "$budget" ]; then
    summary+=("$(printf '%-22s %-28s %12s  %s' "$dir" "$name" - skipped-budget)")
    continue
  fi
  log="$logs/${dir//\//_}.$name.log"
  read -r result execs < <(fuzz_one "$dir" "$name" "$time" "$log" 1)
  summary+=("$(printf '%-22s %-28s %12s  %s' "$dir" "$name" "$execs" "$result")")
  if [ "$result" = FAIL ]; then
    failed=1
    echo "--- $dir $name failed; log $log:"
    tail -30 "$log"
  fi
done
printf '%-22s %-28s %12s  %s\n' package target execs result
printf '%s\n' "${summary[@]}"
echo "== fuzz: $((SECONDS - start))s; logs in $logs"
exit $failed
