# Shared by .ci/fuzz-rotate.sh and bench/fuzz-all.sh; source it from the
# repository root. Bash.

# fuzz_targets prints every fuzz target as "PKGDIR NAME", sorted, one a line
# (the same name may appear in two packages).
fuzz_targets() {
  grep -rn '^func Fuzz' --include='*_test.go' . |
    sed -E 's|^\./(.*)/[^/]*_test\.go:[0-9]+:func (Fuzz[A-Za-z0-9_]*)\(.*|\1 \2|' |
    sort -u
}

# fuzz_one PKGDIR NAME FUZZTIME LOGFILE [PARALLEL]: fuzzes one target and
# prints "RESULT EXECS" where RESULT is ok, FAIL or flake. A run that ends
# with a bare "context deadline exceeded" and wrote no failing input is
# Go's own shutdown race at the end of -fuzztime (golang/go#75804, fixed in
# Go 1.27), not a finding: it counts as flake.
fuzz_one() {
  local dir=$1 name=$2 time=$3 log=$4 par=${5:-1}
  local corpus="$dir/testdata/fuzz/$name" before after rc=0
  before=$(ls "$corpus" 2>/dev/null | sort || true)
  # -fuzzminimizetime bounds the minimization of each new input: go test
  # spends up to 60 s minimizing each one by default, which stalls targets
  # whose interesting inputs are whole documents (bundles, manifests).
  go test -run '^$' -fuzz "^${name}\$" -fuzztime "$time" -fuzzminimizetime 5s -parallel "$par" "./$dir" >"$log" 2>&1 || rc=$?
  after=$(ls "$corpus" 2>/dev/null | sort || true)
  local execs
  execs=$(grep -oE 'execs: [0-9]+' "$log" | tail -1 | awk '{print $2}' || true)
  execs=${execs:-0}
  if [ "$rc" -eq 0 ]; then
    echo "ok $execs"
  elif [ "$before" = "$after" ] && grep -q 'context deadline exceeded' "$log" && ! grep -q 'Failing input written' "$log"; then
    echo "flake $execs"
  else
    echo "FAIL $execs"
  fi
}
