#!/usr/bin/env bash
# Issue 17, acceptance 2: real clients against `readproof mcp --http` on
# 127.0.0.1, built from this checkout:
#   1. examples/agent-ts (the official @modelcontextprotocol/sdk, versions
#      pinned by its package-lock.json, run with tsx) connects with a write
#      token, opens a run, mounts two documents, commits and prints the
#      manifest id, which `readproof manifest` must show with the token's
#      name as the caller;
#   2. the MCP Inspector CLI, pinned, over HTTP with the bearer header: lists
#      the tools, reads a tagged document, is refused a write with a read
#      token (isError, exit 5), and gets nothing without a token.
# Finally SIGTERM must stop the server with exit 0.
#
# It exits 0 without checking only when npm cannot fetch the pinned packages
# (offline CI); it says so on stderr.
set -euo pipefail
cd "$(dirname "$0")/.."
repo=$PWD

A="readproof://demo/policies/refunds"
B="readproof://demo/policies/shipping"

fail() { echo "mcp-http: FAIL: $*" >&2; [ -f "${work:-}/server.err" ] && tail -n 20 "$work/server.err" >&2; exit 1; }
say() { echo "mcp-http: [${SECONDS}s] $*"; }
. .ci/lib-mcp.sh

command -v node >/dev/null && command -v npm >/dev/null || {
  echo "mcp-http: SKIP: node/npm not installed" >&2; exit 0; }

work=$(mktemp -d)
server=""
cleanup() {
  if [ -n "$server" ] && kill -0 "$server" 2>/dev/null; then kill -KILL "$server" 2>/dev/null || true; fi
  rm -rf "$work"
}
trap cleanup EXIT
export npm_config_update_notifier=false npm_config_fund=false npm_config_audit=false
unset READPROOF_STORE READPROOF_CONFIG READPROOF_SESSION READPROOF_RECEIPTS_KEY
# Tokens live outside the project and every repository.
export READPROOF_MCP_TOKENS="$work/config/mcp-tokens.json"

say "installing examples/agent-ts (npm ci, from its package-lock.json)"
if ! (cd examples/agent-ts && npm ci --no-audit --no-fund) >"$work/npm.log" 2>&1; then
  echo "mcp-http: SKIP: npm ci failed (offline?):" >&2; tail -n 5 "$work/npm.log" >&2; exit 0
fi
# Fetch the Inspector once and call its binary directly (npx per call costs
# seconds).
if ! inspector=$(npx --yes -p "$INSPECTOR" -c 'command -v mcp-inspector' 2>"$work/fetch.log") || [ -z "$inspector" ]; then
  echo "mcp-http: SKIP: npx cannot fetch $INSPECTOR:" >&2; tail -n 5 "$work/fetch.log" >&2; exit 0
fi

say "building readproof"
go build -o "$work/readproof" .
rp="$work/readproof"
proj="$work/proj"
mkdir -p "$proj/policies"
printf 'Products can be refunded within 30 days.\n' >"$proj/policies/refunds.md"
printf 'Orders ship within 2 days.\n' >"$proj/policies/shipping.md"
(
  cd "$proj"
  "$rp" init >/dev/null
  "$rp" resource add "$A" --source-type filesystem --path policies/refunds.md >/dev/null
  "$rp" resource add "$B" --source-type filesystem --path policies/shipping.md >/dev/null
  "$rp" get "$A" >/dev/null 2>&1
  "$rp" tag set "$A" prod >/dev/null
)
write_token=$("$rp" mcp token add ci-agent --expires 1h 2>/dev/null)
read_token=$("$rp" mcp token add ci-reader --scope read --expires 1h 2>/dev/null)

say "starting readproof mcp --http 127.0.0.1:0"
(cd "$work" && exec "$rp" --store "$proj/.readproof" mcp --http 127.0.0.1:0 2>"$work/server.err") &
server=$!
url=""
for _ in $(seq 100); do
  url=$(grep -o 'http://127\.0\.0\.1:[0-9]*/' "$work/server.err" || true)
  [ -n "$url" ] && break
  kill -0 "$server" 2>/dev/null || fail "the server exited at start"
  sleep 0.1
done
[ -n "$url" ] || fail "the server did not say where it listens"
say "serving on $url"

say "examples/agent-ts: run start, mount $A and $B, commit"
mid=$(cd examples/agent-ts && READPROOF_MCP_URL="$url" READPROOF_MCP_TOKEN="$write_token" \
  ./node_modules/.bin/tsx agent.ts "$A" "$B" 2>"$work/agent.err") || { cat "$work/agent.err" >&2; fail "agent-ts failed"; }
[[ "$mid" =~ ^[0-9a-f]{40}$ ]] || fail "agent-ts printed '$mid', not a manifest id"
shown=$(cd "$proj" && "$rp" --json manifest "$mid") || fail "readproof manifest $mid failed"
node -e '
  const m = JSON.parse(process.argv[1]);
  const ok = m.manifest_id === process.argv[2] && m.caller === "ci-agent" && m.entries.length === 2 &&
    m.entries[0].uri === process.argv[3] && m.entries[1].uri === process.argv[4];
  if (!ok) { console.error(JSON.stringify(m).slice(0, 1500)); process.exit(1); }
' "$shown" "$mid" "$A" "$B" || fail "readproof manifest does not show the agent's run as ci-agent's with two entries"
say "manifest $mid: 2 entries, caller ci-agent"

# insp OUT TOKEN METHOD-ARGS...: one Inspector CLI call over HTTP; stdout to
# OUT, exit code in $rc.
insp() {
  local out=$1 tok=$2; shift 2
  capture "$out" "$inspector" --cli "$url" --transport http --header "Authorization: Bearer $tok" "$@" --format json
}

say "Inspector CLI over HTTP: tools/list"
insp "$work/tools.json" "$read_token" --method tools/list
[ "$rc" = 0 ] || fail "tools/list exited $rc: $(cat "$work/tools.json.err")"
check "$work/tools.json" 'r.result.tools.some(t => t.name === "readproof_run_commit") && r.result.tools.length >= 13' "the readproof tools"

say "Inspector CLI over HTTP: tagged read with a read token"
insp "$work/read.json" "$read_token" --method tools/call --tool-name readproof_resolve --tool-args-json '{"uri":"'"$A"'@prod"}'
[ "$rc" = 0 ] || fail "readproof_resolve @prod exited $rc: $(cat "$work/read.json")"
check "$work/read.json" 'r.result.structuredContent.content === "Products can be refunded within 30 days.\n" && r.result.structuredContent.decision === "use_tag"' "the tagged bytes"

say "Inspector CLI over HTTP: a write with a read token is refused"
insp "$work/refused.json" "$read_token" --method tools/call --tool-name readproof_run_start --tool-args-json '{"run_id":"ci-reader-run"}'
[ "$rc" = 5 ] || fail "a read token starting a run must be a tool error (exit 5), got $rc: $(cat "$work/refused.json")"
check "$work/refused.json" 'r.result.isError === true && /scope read/.test(r.result.content[0].text)' "refused, naming the scope"

say "Inspector CLI over HTTP: a revoked token gets nothing"
"$rp" mcp token revoke ci-reader 2>/dev/null
insp "$work/revoked.json" "$read_token" --method tools/list
[ "$rc" != 0 ] || fail "a revoked token was served"

say "SIGTERM: the server stops with exit 0"
kill -TERM "$server"
set +e; wait "$server"; rc=$?; set -e
server=""
[ "$rc" = 0 ] || fail "exit $rc after SIGTERM"
grep -q 'requests in flight finished' "$work/server.err" || fail "no shutdown message"
if grep -q "${write_token#rpmcp_}" "$work/server.err" "$work/agent.err"; then fail "a token was printed"; fi

say "OK: agent-ts and the MCP Inspector ($INSPECTOR) work with readproof mcp --http"
