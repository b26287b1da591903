#!/usr/bin/env bash
# Fuzzes every target once, one after another with one worker each
# (-parallel 1), so it can run in the background while other work goes on:
# FUZZ_TIME (default 60s) per target, and FUZZ_LONG_TIME (default 5m) for the
# parsers of untrusted input listed in LONG below (policy file, URIs,
# evidence bundles and signatures, probe reports and keys, receipts and
# claims, MCP input, store records, manifests, what a git remote sends).
# Logs go to FUZZ_LOG_DIR (default $TMPDIR/fuzz-all-DATE), one per target,
# and a summary table of execs and results ends the output and
# FUZZ_LOG_DIR/summary.txt. Exit status 1 if any target failed.
#
#   nice bench/fuzz-all.sh > fuzz-all.out 2>&1 &
#   FUZZ_ONLY='probe receipts' FUZZ_TIME=5s bench/fuzz-all.sh   # some packages
set -euo pipefail
cd "$(dirname "$0")/.."
. bench/fuzzlib.sh

# PKGDIR:NAME, or PKGDIR:* for every target of a package.
LONG="internal/policy:FuzzParse identity:FuzzParseURI identity:FuzzKeyInjective
evidence:* probe:FuzzParseReport probe:FuzzValidateSession probe:FuzzFindSentinels probe:FuzzCheckAnswer
probe:FuzzParseKey receipts:* internal/mcpserver:* internal/store:FuzzVerifyEvidence
internal/store:FuzzDecodeObservation internal/store:FuzzDecodeVerdicts manifest:FuzzDecode
gitstore:FuzzParsePackedRefs gitstore:FuzzParseLooseRef gitstore:FuzzParseLsRemote gitstore:FuzzParseRemoteConfig
adapters:FuzzParseRefs adapters:FuzzParseContents internal/storecheck:FuzzParseSubset"

time=${FUZZ_TIME:-60s}
long=${FUZZ_LONG_TIME:-5m}
logs=${FUZZ_LOG_DIR:-${TMPDIR:-/tmp}/fuzz-all-$(date -u +%Y%m%dT%H%M%SZ)}
mkdir -p "$logs"

is_long() {
  local dir=$1 name=$2 e
  for e in $LONG; do
    [ "$e" = "$dir:$name" ] || [ "$e" = "$dir:*" ] && return 0
  done
  return 1
}

mapfile -t all < <(fuzz_targets)
echo "== fuzz-all: ${#all[@]} targets; $time each, $long for parsers of untrusted input; logs in $logs"
start=$SECONDS
failed=0
rows=()
for t in "${all[@]}"; do
  read -r dir name <<<"$t"
  if [ -n "${FUZZ_ONLY:-}" ] && [[ " $FUZZ_ONLY " != *" $dir "* ]]; then
    continue
  fi
  d=$time
  is_long "$dir" "$name" && d=$long
  log="$logs/${dir//\//_}.$name.log"
  t0=$SECONDS
  read -r result execs < <(fuzz_one "$dir" "$name" "$d" "$log" 1)
  row=$(printf '%-22s %-28s %6s %14s  %s' "$dir" "$name" "$d" "$execs" "$result")
  rows+=("$row")
  echo "$row ($((SECONDS - t0))s)"
  [ "$result" = FAIL ] && failed=1
done
{
  printf '%-22s %-28s %6s %14s  %s\n' package target time execs result
  printf '%s\n' "${rows[@]}"
  echo "total $((SECONDS - start))s; failed: $failed"
} | tee "$logs/summary.txt"
exit $failed
