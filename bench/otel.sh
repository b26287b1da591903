#!/usr/bin/env bash
# bench/otel.sh: what OpenTelemetry costs a plain CLI call (issue 17,
# acceptance 4). Builds readproof from BASE (default: main) and from the
# work tree, then compares them paired and alternating (bench/pairtime.go,
# median of N runs each):
#
#   off  `readproof --help` and a 1-document `run --id`, no OTEL_* set:
#        within 5% of BASE;
#   on   the same with OTEL_EXPORTER_OTLP_ENDPOINT naming a local receiver
#        (and TRACEPARENT set): within 15%.
#
# It also prints the package-initialisation time GODEBUG=inittrace reports
# for both binaries, which a busy machine does not blur, and `uptime`: the
# wall-time ratios are only as good as the machine is quiet. Changes merged
# between BASE and NEW count too: to measure telemetry alone, name a NEW
# on the same line as BASE (the otel branch before a merge of main).
#
#   bash bench/otel.sh                        # N=20
#   N=40 BASE=2601c03 NEW=1ef3c39 bash bench/otel.sh  # one branch alone
set -euo pipefail

N=${N:-20}
root=$(cd "$(dirname "$0")/.." && pwd)
if [ -z "${BASE:-}" ]; then
	# the tree just before telemetry came in: the parent of the commit
	# that added internal/telemetry
	first=$(git -C "$root" log --diff-filter=A --format=%H -- internal/telemetry/doc.go | tail -1)
	BASE=$(git -C "$root" rev-parse "$first^")
fi
work=$(mktemp -d "${TMPDIR:-/tmp}/readproof-otel-bench.XXXXXX")
trap 'rm -rf "$work"' EXIT

echo "building $BASE and ${NEW:-the work tree} in $work"
mkdir "$work/base"
git -C "$root" archive "$BASE" | tar -x -C "$work/base"
(cd "$work/base" && go build -o "$work/readproof-base" .)
cp "$work/readproof-base" "$work/readproof-base.copy" && mv "$work/readproof-base.copy" "$work/readproof-base" # time a copy, not the linker's file (docs/startup.md)
if [ -n "${NEW:-}" ]; then
	mkdir "$work/new"
	git -C "$root" archive "$NEW" | tar -x -C "$work/new"
	(cd "$work/new" && go build -o "$work/readproof-new" .)
	cp "$work/readproof-new" "$work/readproof-new.copy" && mv "$work/readproof-new.copy" "$work/readproof-new" # time a copy, not the linker's file (docs/startup.md)
else
	(cd "$root" && go build -o "$work/readproof-new" .)
	cp "$work/readproof-new" "$work/readproof-new.copy" && mv "$work/readproof-new.copy" "$work/readproof-new" # time a copy, not the linker's file (docs/startup.md)
fi
(cd "$root" && go build -o "$work/pairtime" bench/pairtime.go)

# A project with one small document, and one store per side.
proj=$work/proj
mkdir -p "$proj"
printf 'Products can be refunded within 30 days.\n' > "$proj/refunds.md"
cd "$proj"
export HOME=$work/home GIT_CONFIG_NOSYSTEM=1 GIT_CONFIG_GLOBAL=/dev/null
unset OTEL_SDK_DISABLED OTEL_TRACES_EXPORTER OTEL_EXPORTER_OTLP_ENDPOINT OTEL_EXPORTER_OTLP_TRACES_ENDPOINT TRACEPARENT TRACESTATE
mkdir -p "$HOME"
"$work/readproof-new" init >/dev/null
"$work/readproof-new" resource add readproof://demo/refunds --source-type filesystem --path refunds.md >/dev/null
for side in a b; do
	"$work/readproof-new" --store "st-$side" init >/dev/null 2>&1 || true
done

pt=("$work/pairtime" -n "$N" -a "$work/readproof-base" -b "$work/readproof-new")
run() { echo -- --store "st-{side}" run --id "r-$1-{side}-{i}" readproof://demo/refunds; }
on=(-otlp -env "OTEL_EXPORTER_OTLP_ENDPOINT={otlp}" -env "TRACEPARENT=00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01")

uptime
"${pt[@]}" -label "help, off:" -- --help
"${pt[@]}" -label "run --id, off:" $(run off)
"${pt[@]}" -label "help, on: " "${on[@]}" -- --help
"${pt[@]}" -label "run --id, on: " "${on[@]}" $(run on)
uptime

echo "package init (GODEBUG=inittrace=1, sum of clock over all packages, median of 9):"
for b in base new; do
	for i in 1 2 3 4 5 6 7 8 9; do
		GODEBUG=inittrace=1 "$work/readproof-$b" --help 2>&1 >/dev/null | awk '$1 == "init" {t += $5} END {printf "%.3f\n", t}'
	done | sort -n | sed -n 5p | sed "s/^/  $b: /; s/\$/ ms/"
done
echo "  otel packages in the new binary:"
GODEBUG=inittrace=1 "$work/readproof-new" --help 2>&1 >/dev/null | awk '$1 == "init" && $2 ~ /opentelemetry|protobuf|grpc/ {t += $5; n++} END {printf "  %d packages, %.3f ms\n", n, t}'
ls -l "$work/readproof-base" "$work/readproof-new" | awk '{print "  size " $5 "  " $NF}'
