#!/usr/bin/env bash
# Soak test (issue 13, acceptance 2); not part of `go test`. It builds
# readproof and then, on one store:
#   1. kills SOAK_KILLS (default 200) commands with kill -9, spread evenly over
#      run, mount, commit, tag, receipts, exec, push and pull, each at a random
#      moment up to 0.8x that command's measured normal duration (the whole
#      process group, so push and pull lose their git children too), while
#      SOAK_WRITERS (default 8) concurrent writers record runs and receipts;
#   2. when root, fills a small tmpfs (SOAK_TMPFS_SIZE, default 24m) holding a
#      second store and makes writes fail on the full disk, then frees space;
#      otherwise says why it skips this phase;
#   3. makes the next write succeed on both stores and checks: readproof
#      verify --read-data and git fsck --strict clean (store and remote), no
#      lost exit-0 result (every run id whose command exited 0 is a committed
#      run recorded on the journal; every receipt id printed by a command that
#      exited 0 is listed), and no temporary file left (tmp_obj_*, tmp_pack_*,
#      tmp_idx_*, *.lock, objects/tmp_objdir-incoming-*).
# It prints its figures and exits 1 when a check fails.
#
#   bench/soak.sh                        # the full soak (several minutes)
#   SOAK_KILLS=16 SOAK_WRITER_RUNS=5 bench/soak.sh   # a quick check of the script
#   SOAK_KEEP=1 bench/soak.sh            # keep the work directory for a post-mortem
set -uo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
kills=${SOAK_KILLS:-200}
writers=${SOAK_WRITERS:-8}
writer_runs=${SOAK_WRITER_RUNS:-40}
tmpfs_size=${SOAK_TMPFS_SIZE:-24m}
docs=${SOAK_DOCS:-40}
work=$(mktemp -d "${TMPDIR:-/tmp}/readproof-soak.XXXXXX")
mounted=""
cleanup() {
  [ -n "$mounted" ] && umount "$mounted" 2>/dev/null
  if [ -n "${SOAK_KEEP:-}" ]; then echo "work directory kept: $work"; else rm -rf "$work"; fi
}
trap cleanup EXIT

say() { echo "soak: $*"; }
failures=()
fail() { failures+=("$*"); echo "soak: FAIL: $*"; }

rp="$work/bin/readproof"
mkdir -p "$work/bin"
(cd "$here" && go build -o "$rp" .) || { echo "soak: build failed"; exit 1; }
export PATH="$work/bin:$PATH"
export GIT_CONFIG_NOSYSTEM=1 GIT_CONFIG_GLOBAL=/dev/null
export GIT_AUTHOR_NAME=soak GIT_AUTHOR_EMAIL=soak@example.invalid GIT_COMMITTER_NAME=soak GIT_COMMITTER_EMAIL=soak@example.invalid
export READPROOF_RECEIPTS_KEY="$work/keys/receipts.key"
export XDG_CONFIG_HOME="$work/config"
unset READPROOF_STORE READPROOF_CONFIG

ms() { echo $(($(date +%s%N) / 1000000)); }

# project DIR N: a project with N documents readproof://soak/dNN and a store.
project() {
  local dir=$1 n=$2 i
  mkdir -p "$dir/docs"
  {
    echo "version = 1"
    for i in $(seq 1 "$n"); do
      i=$(printf %02d "$i")
      echo
      echo "[[resource]]"
      echo "uri = \"readproof://soak/d$i\""
      echo "source = { type = \"filesystem\", path = \"docs/d$i.md\" }"
    done
  } >"$dir/readproof.toml"
  for i in $(seq 1 "$n"); do
    head -c 2048 /dev/urandom | base64 >"$dir/docs/d$(printf %02d "$i").md"
  done
  (cd "$dir" && readproof init >/dev/null 2>&1) || { echo "soak: init in $dir failed"; exit 1; }
}
uris() { # uris FIRST COUNT
  local i
  for i in $(seq "$1" $(($1 + $2 - 1))); do printf 'readproof://soak/d%02d ' $(((i - 1) % docs + 1)); done
}

proj="$work/proj"
store="$proj/.readproof"
remote="$work/remote.git"
peer="$work/peer"
project "$proj" "$docs"
(cd "$proj" && readproof receipts key init >/dev/null 2>&1) || { echo "soak: receipts key init failed"; exit 1; }
git init -q --bare --initial-branch=main "$remote"
(cd "$proj" && readproof run --id seed $(uris 1 "$docs") >/dev/null && readproof remote add origin "$remote" >/dev/null && readproof push >/dev/null 2>&1) ||
  { echo "soak: seeding the remote failed"; exit 1; }
(cd "$work" && readproof clone "$remote" "$peer.store" >/dev/null 2>&1) || { echo "soak: clone failed"; exit 1; }
mkdir -p "$peer" && cp -r "$proj/docs" "$proj/readproof.toml" "$peer/"
peer_rp() { (cd "$peer" && readproof --store "$peer.store" "$@"); }
echo '{"q":"soak"}' >"$work/args.json"
echo "result" >"$work/result.txt"
oklog="$work/ok.log" # KIND ID, for every command that exited 0 and must have left ID behind
: >"$oklog"

# op_prepare KIND I: unkilled set-up an operation needs; op_args KIND I: the
# command to kill.
op_prepare() {
  case $1 in
  mount) (cd "$proj" && readproof run start "km-$2" >/dev/null 2>&1) ;;
  commit) (cd "$proj" && readproof run start "kc-$2" >/dev/null 2>&1 && readproof run mount "kc-$2" $(uris "$2" 5) >/dev/null 2>&1) ;;
  pull) peer_rp run --id "peer-$2" $(uris "$2" 3) >/dev/null 2>&1 && peer_rp pull >/dev/null 2>&1; peer_rp push >/dev/null 2>&1 ;;
  esac
  return 0
}
op_args() {
  case $1 in
  run) echo "run --id kr-$2 $(uris "$2" 12)" ;;
  mount) echo "run mount km-$2 $(uris "$2" 12)" ;;
  commit) echo "run commit kc-$2" ;;
  tag) echo "tag set readproof://soak/d$(printf %02d $(($2 % docs + 1))) t$(($2 % 5))" ;;
  receipts) echo "receipts issue --session soak --tool search --args-json $work/args.json --result $work/result.txt" ;;
  exec) echo "exec --session soak-exec -- sh -c 'echo out; sleep 0.05'" ;;
  push) echo "push" ;;
  pull) echo "pull" ;;
  esac
}
# op_ok KIND I OUT ERR: what a command that exited 0 must have left.
op_ok() {
  case $1 in
  run) echo "run kr-$2" >>"$oklog" ;;
  commit) echo "run kc-$2" >>"$oklog" ;;
  receipts) echo "receipt soak $(tr -d '[:space:]' <"$3")" >>"$oklog" ;;
  exec) echo "receipt soak-exec $(grep -o 'rcpt_[A-Za-z0-9_]*' "$4" | head -1)" >>"$oklog" ;;
  esac
}
# start KIND I: starts the command in its own process group; sets $pid.
start() {
  local args
  args=$(op_args "$1" "$2")
  (cd "$proj" && eval "exec setsid readproof $args" >"$work/out" 2>"$work/err") &
  pid=$!
}

kinds=(run mount commit tag receipts exec push pull)
declare -A dur
say "calibrating: normal duration of each command"
for k in "${kinds[@]}"; do
  op_prepare "$k" 900
  t0=$(ms)
  start "$k" 900
  wait "$pid"
  rc=$?
  dur[$k]=$(($(ms) - t0))
  [ "$rc" -eq 0 ] && op_ok "$k" 900 "$work/out" "$work/err"
  say "  $k: ${dur[$k]} ms (exit $rc)"
done

# Writers: each records runs (re-reading a document it rewrote) and issues
# receipts, logging every id whose command exited 0.
stopfile="$work/stop-writers"
writer() {
  local w=$1 i out
  for i in $(seq 1 "$writer_runs"); do
    [ -e "$stopfile" ] && break
    head -c 512 /dev/urandom | base64 >"$proj/docs/d$(printf %02d $((w % docs + 1))).md"
    if (cd "$proj" && readproof run --id "w$w-$i" $(uris $((w * 3 + 1)) 6) >/dev/null 2>>"$work/writer-$w.err"); then
      echo "run w$w-$i" >>"$work/writer-$w.ok"
    else
      echo "run w$w-$i failed" >>"$work/writer-$w.err"
    fi
    if out=$(cd "$proj" && readproof receipts issue --session "w$w" --tool t --args-json "$work/args.json" --result "$work/result.txt" 2>>"$work/writer-$w.err"); then
      echo "receipt w$w $out" >>"$work/writer-$w.ok"
    fi
  done
}
say "phase 1: $kills kill -9 injections over ${kinds[*]}, with $writers concurrent writers"
wpids=()
for w in $(seq 1 "$writers"); do
  writer "$w" &
  wpids+=($!)
done
declare -A killed finished
t_start=$(ms)
for i in $(seq 1 "$kills"); do
  k=${kinds[$(((i - 1) % ${#kinds[@]}))]}
  op_prepare "$k" "$i"
  max=$((dur[$k] * 8 / 10))
  [ "$max" -lt 1 ] && max=1
  delay=$((RANDOM * 32768 + RANDOM))
  delay=$((delay % max))
  start "$k" "$i"
  sleep "$(printf '%d.%03d' $((delay / 1000)) $((delay % 1000)))"
  kill -9 -- "-$pid" 2>/dev/null
  { wait "$pid"; } 2>/dev/null
  rc=$?
  if [ "$rc" -eq 137 ]; then
    killed[$k]=$((${killed[$k]:-0} + 1))
  else
    finished[$k]=$((${finished[$k]:-0} + 1))
    [ "$rc" -eq 0 ] && op_ok "$k" "$i" "$work/out" "$work/err"
  fi
done
t_kills=$(($(ms) - t_start))
touch "$stopfile"
wait "${wpids[@]}"
cat "$work"/writer-*.ok >>"$oklog" 2>/dev/null
say "phase 1 done in $((t_kills / 1000)) s"
for k in "${kinds[@]}"; do
  say "  $k: killed mid-flight ${killed[$k]:-0}, finished before the kill ${finished[$k]:-0} (delay up to $((dur[$k] * 8 / 10)) ms)"
done
wok=$(cat "$work"/writer-*.ok 2>/dev/null | wc -l)
wfail=$(grep -h 'failed$' "$work"/writer-*.err 2>/dev/null | wc -l)
say "  writers: $wok results from exit-0 commands, $wfail runs failed"
grep -hv 'failed$' "$work"/writer-*.err 2>/dev/null | sed 's/^/soak:   writer stderr: /' | sort | uniq -c | sort -rn | head -5

# temporaries DIR: temporary files git and readproof leave behind.
temporaries() {
  find "$1" \( -name 'tmp_obj_*' -o -name 'tmp_pack_*' -o -name 'tmp_idx_*' -o -name '*.lock' -o -path '*/objects/tmp_objdir-incoming-*' \) -print 2>/dev/null
}

# Phase 2: a full disk.
fullproj=""
if [ "$(id -u)" != 0 ]; then
  say "phase 2 skipped: mounting a small tmpfs needs root (run as root for the full-disk phase)"
elif ! mkdir -p "$work/full" || ! mount -t tmpfs -o "size=$tmpfs_size" tmpfs "$work/full" 2>"$work/mount.err"; then
  say "phase 2 skipped: cannot mount a tmpfs: $(cat "$work/mount.err")"
else
  mounted="$work/full"
  fullproj="$work/full/proj"
  say "phase 2: full disk on a $tmpfs_size tmpfs"
  project "$fullproj" 8
  (cd "$fullproj" && readproof run --id before-full $(uris 1 8) >/dev/null 2>&1) || fail "full-disk store: first run failed"
  # big documents, then fill what is left
  for i in 1 2 3 4 5 6 7 8; do head -c $((256 * 1024)) /dev/urandom | base64 >"$fullproj/docs/d0$i.md"; done
  dd if=/dev/zero of="$work/full/filler" bs=64k >/dev/null 2>&1
  failed_writes=0 enospc=0
  for i in $(seq 1 12); do
    if (cd "$fullproj" && readproof run --id full-$i $(uris 1 8) >/dev/null 2>"$work/full.err"); then
      echo "run full-$i" >>"$work/full.ok"
    else
      failed_writes=$((failed_writes + 1))
      grep -qi 'no space\|disk is full\|disk full' "$work/full.err" && enospc=$((enospc + 1))
    fi
  done
  left=$(temporaries "$fullproj/.readproof" | wc -l)
  say "  $failed_writes of 12 writes failed on the full disk ($enospc said the disk is full); $left temporary files while full"
  sed -n '1,3s/^/soak:   last error: /p' "$work/full.err"
  rm -f "$work/full/filler"
  cat "$work/full.ok" >>"$work/full-oklog" 2>/dev/null
fi

# Phase 3: the next successful write, then the checks.
next_write() { # DIR ID: retries while a killed writer's lock goes stale
  local n
  for n in 1 2 3 4 5 6; do
    (cd "$1" && readproof run --id "$2" $(uris 1 "$3") >/dev/null 2>"$work/next.err") && return 0
    sleep 3
  done
  cat "$work/next.err"
  return 1
}
say "phase 3: next successful write and checks"
# A killed writer's temporary files are removed by the next write once they
# are older than the stale-lock age (10 s): a younger one may belong to a
# writer that is still running. Wait that long, as a later user would.
sleep "${SOAK_STALE_WAIT:-11}"
next_write "$proj" after-soak "$docs" || fail "the write after the soak failed"
(cd "$proj" && readproof pull >/dev/null 2>"$work/push.err" && readproof push >/dev/null 2>>"$work/push.err") || fail "pull and push after the soak failed: $(tail -2 "$work/push.err" | tr '\n' ' ')"

check_store() { # LABEL PROJECTDIR OKLOG
  local label=$1 dir=$2 ok=$3 s="$2/.readproof" out rc runs journal lost=0 id kind session
  out=$(cd "$dir" && readproof verify --read-data 2>&1)
  rc=$?
  if [ $rc -ne 0 ]; then fail "$label: readproof verify --read-data exit $rc: $(echo "$out" | head -5 | tr '\n' ' ')"; else say "  $label: verify --read-data clean"; fi
  out=$(git --git-dir "$s" fsck --strict --no-dangling 2>&1)
  if [ $? -ne 0 ] || [ -n "$out" ]; then fail "$label: git fsck --strict: $(echo "$out" | head -5 | tr '\n' ' ')"; else say "  $label: git fsck --strict clean"; fi
  runs=$(cd "$dir" && readproof run list --json 2>/dev/null | grep -o '"run_id": *"[^"]*"' | sed 's/.*"\([^"]*\)"$/\1/' | sort -u)
  journal=$(git --git-dir "$s" log --format=%s main 2>/dev/null | sed -n 's/^record run //p' | sort -u)
  local nruns=0 nrec=0
  while read -r kind a b; do
    [ -n "$kind" ] || continue
    case $kind in
    run)
      nruns=$((nruns + 1))
      if ! grep -qx -- "$a" <<<"$runs" || ! grep -qx -- "$a" <<<"$journal"; then
        lost=$((lost + 1)); echo "soak:   lost run $a"
      fi ;;
    receipt)
      nrec=$((nrec + 1))
      if [ -z "$b" ] || ! grep -q "\"$b\"" <<<"$(cd "$dir" && readproof receipts list --json "$a" 2>/dev/null)"; then
        lost=$((lost + 1)); echo "soak:   lost receipt $a $b"
      fi ;;
    esac
  done <"$ok"
  if [ $lost -ne 0 ]; then fail "$label: $lost of $((nruns + nrec)) exit-0 results lost"; else say "  $label: 0 lost exit-0 results ($nruns runs, $nrec receipts)"; fi
  local tmps
  tmps=$(temporaries "$s")
  if [ -n "$tmps" ]; then fail "$label: $(echo "$tmps" | wc -l) temporary files left after the next write: $(echo "$tmps" | head -5 | tr '\n' ' ')"; else say "  $label: 0 temporary files"; fi
}
check_store store "$proj" "$oklog"
out=$(git --git-dir "$remote" fsck --strict --no-dangling 2>&1)
if [ $? -ne 0 ] || [ -n "$out" ]; then fail "remote: git fsck --strict: $(echo "$out" | head -3 | tr '\n' ' ')"; else say "  remote: git fsck --strict clean"; fi
tmps=$(temporaries "$remote")
if [ -n "$tmps" ]; then fail "remote: $(echo "$tmps" | wc -l) temporary files or locks left: $(echo "$tmps" | head -5 | tr '\n' ' ')"; else say "  remote: 0 temporary files"; fi
if [ -n "$fullproj" ]; then
  next_write "$fullproj" after-full 8 || fail "full-disk store: the write after freeing space failed"
  touch "$work/full-oklog"
  check_store full-disk "$fullproj" "$work/full-oklog"
fi

echo
say "figures: $kills kills ($(( $(IFS=+; echo "${killed[*]:-0}") )) mid-flight), $writers writers, $(wc -l <"$oklog") exit-0 results checked, phase 1 $((t_kills / 1000)) s"
if [ ${#failures[@]} -ne 0 ]; then
  say "${#failures[@]} check(s) failed:"
  printf 'soak:   %s\n' "${failures[@]}"
  exit 1
fi
say "all checks passed"
