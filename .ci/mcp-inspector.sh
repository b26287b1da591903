#!/usr/bin/env bash
# Independent client check of `readproof mcp`: the MCP Inspector CLI (a
# different codebase from the Go SDK the server is built on), pinned, drives
# the built binary over stdio. It lists the tools and the template, reads a
# resource plainly and @prod, runs start/mount/commit, checks the manifest id
# with `readproof manifest`, and expects isError (exit 5) for an unknown run.
#
# Any mismatch fails the script. It exits 0 without checking only when npx
# cannot fetch the pinned package (offline CI); it says so on stderr.
set -euo pipefail
cd "$(dirname "$0")/.."

URI="readproof://demo/policies/refunds"

fail() { echo "mcp-inspector: FAIL: $*" >&2; exit 1; }
say() { echo "mcp-inspector: $*"; }
. .ci/lib-mcp.sh

command -v node >/dev/null && command -v npx >/dev/null || {
  echo "mcp-inspector: SKIP: node/npx not installed" >&2; exit 0; }

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export npm_config_update_notifier=false npm_config_fund=false npm_config_audit=false
unset READPROOF_STORE READPROOF_CONFIG READPROOF_SESSION

say "fetching $INSPECTOR"
# Fetch it once and call its binary directly: npx resolves the package again
# on every call (about 1.5 s each here, twelve calls).
if ! inspector=$(npx --yes -p "$INSPECTOR" -c 'command -v mcp-inspector' 2>"$work/fetch.log") || [ -z "$inspector" ]; then
  echo "mcp-inspector: SKIP: npx cannot fetch $INSPECTOR:" >&2
  tail -n 5 "$work/fetch.log" >&2
  exit 0
fi

say "building readproof"
go build -o "$work/readproof" .
rp="$work/readproof"
proj="$work/proj"
mkdir -p "$proj/policies"
printf 'Products can be refunded within 30 days.\n' >"$proj/policies/refunds.md"
(
  cd "$proj"
  "$rp" init >/dev/null
  "$rp" resource add "$URI" --source-type filesystem --path policies/refunds.md --policy require_fresh >/dev/null
  "$rp" run --id seed "$URI" >/dev/null
  "$rp" tag set "$URI" prod >/dev/null
)
# The source changes after the tag: @prod must keep the old bytes.
printf 'Products can be refunded within 14 days.\n' >"$proj/policies/refunds.md"

# insp OUT METHOD-ARGS...: run one Inspector CLI call against the server,
# started with absolute paths from another directory as a host would;
# stdout to OUT, the exit code in $rc.
insp() {
  local out=$1; shift
  capture "$out" "$inspector" --cli "$rp" --store "$proj/.readproof" --config "$proj/readproof.toml" mcp -- \
    "$@" --format json
}

field() { node -e 'const r=JSON.parse(require("fs").readFileSync(process.argv[1],"utf8")); console.log(Function("r","return ("+process.argv[2]+");")(r))' "$1" "$2"; }

say "tools/list"
insp "$work/tools.json" --method tools/list
[ "$rc" = 0 ] || fail "tools/list exited $rc: $(cat "$work/tools.json.err")"
check "$work/tools.json" '
  (() => {
    const want = ["readproof_resources_list","readproof_resolve","readproof_history","readproof_run_start",
      "readproof_run_mount","readproof_run_commit","readproof_manifest","readproof_diff","readproof_replay",
      "readproof_tag_set","readproof_tag_list","readproof_tag_delete","readproof_evidence_export"];
    const t = Object.fromEntries(r.result.tools.map(x => [x.name, x]));
    return want.every(n => t[n] && t[n].inputSchema.type === "object" && t[n].outputSchema) &&
      t.readproof_manifest.annotations.readOnlyHint === true &&
      t.readproof_manifest.annotations.openWorldHint === false &&
      t.readproof_run_mount.annotations.readOnlyHint === false &&
      JSON.stringify(t.readproof_run_mount.inputSchema.required.slice().sort()) === JSON.stringify(["run_id","uri"]);
  })()' "the 13 seed tools with schemas and annotations"

say "resources/templates/list"
insp "$work/templates.json" --method resources/templates/list
[ "$rc" = 0 ] || fail "resources/templates/list exited $rc"
check "$work/templates.json" 'r.result.resourceTemplates.length === 1 && r.result.resourceTemplates[0].uriTemplate === "readproof://{namespace}/{+path}"' \
  "one template readproof://{namespace}/{+path}"

say "resources/list"
insp "$work/list.json" --method resources/list
[ "$rc" = 0 ] || fail "resources/list exited $rc"
check "$work/list.json" 'r.result.resources.length === 1 && r.result.resources[0].uri === "'"$URI"'" &&
  r.result.resources[0].name === "policies/refunds" && r.result.resources[0]._meta.namespace === "demo" &&
  r.result.resources[0].mimeType === "text/markdown" && /^[0-9a-f]{40}$/.test(r.result.resources[0]._meta.current_snapshot)' \
  "the declared resource with its current snapshot"

say "resources/read $URI"
insp "$work/read.json" --method resources/read --uri "$URI"
[ "$rc" = 0 ] || fail "resources/read exited $rc"
check "$work/read.json" 'r.result.contents[0].text === "Products can be refunded within 14 days.\n" &&
  r.result.contents[0]._meta.decision === "fetch" && r.result.contents[0]._meta.ref === "" &&
  /^sha256:[0-9a-f]{64}$/.test(r.result.contents[0]._meta.content_hash)' "plain read: the live bytes, decision fetch"

say "resources/read $URI@prod"
insp "$work/prod.json" --method resources/read --uri "$URI@prod"
[ "$rc" = 0 ] || fail "resources/read @prod exited $rc"
check "$work/prod.json" 'r.result.contents[0].text === "Products can be refunded within 30 days.\n" &&
  r.result.contents[0]._meta.decision === "use_tag" && r.result.contents[0]._meta.ref === "prod"' \
  "@prod read: the tagged bytes, decision use_tag"

say "resources/read of an unknown resource"
insp "$work/unknown.json" --method resources/read --uri "readproof://demo/policies/nope"
[ "$rc" != 0 ] || fail "reading an unknown resource succeeded"

say "run trio"
insp "$work/start.json" --method tools/call --tool-name readproof_run_start --tool-args-json '{"run_id":"ci-1"}'
[ "$rc" = 0 ] || fail "readproof_run_start exited $rc: $(cat "$work/start.json")"
check "$work/start.json" 'r.result.structuredContent.run_id === "ci-1" && r.result.structuredContent.open === true' "run started"
insp "$work/mount.json" --method tools/call --tool-name readproof_run_mount --tool-args-json '{"run_id":"ci-1","uri":"'"$URI"'@prod"}'
[ "$rc" = 0 ] || fail "readproof_run_mount exited $rc: $(cat "$work/mount.json")"
check "$work/mount.json" 'r.result.structuredContent.position === 0 && r.result.structuredContent.content === "Products can be refunded within 30 days.\n" &&
  r.result.content.length === 1 && r.result.content[0].type === "text"' "mounted @prod at position 0, one text block"
insp "$work/commit.json" --method tools/call --tool-name readproof_run_commit --tool-args-json '{"run_id":"ci-1"}'
[ "$rc" = 0 ] || fail "readproof_run_commit exited $rc: $(cat "$work/commit.json")"
check "$work/commit.json" '/^[0-9a-f]{40}$/.test(r.result.structuredContent.manifest_id) && r.result.structuredContent.entries === 1' "committed"
mid=$(field "$work/commit.json" 'r.result.structuredContent.manifest_id')

say "readproof manifest ci-1 shows $mid"
(cd "$proj" && "$rp" manifest ci-1 --json) >"$work/manifest.json" || fail "readproof manifest ci-1 failed"
check "$work/manifest.json" 'r.manifest_id === "'"$mid"'" && r.run_id === "ci-1" && r.entries.length === 1 && r.entries[0].ref === "prod"' \
  "readproof manifest shows the manifest id the MCP commit returned"
# Read the whole output before matching: with pipefail, grep -q closing the
# pipe early can fail the pipeline through SIGPIPE (a flake seen in CI).
shown=$(cd "$proj" && "$rp" manifest "$mid") || fail "readproof manifest $mid failed"
grep -q "^manifest $mid" <<<"$shown" || fail "readproof manifest $mid does not show it"

say "readproof_replay through MCP"
insp "$work/replay.json" --method tools/call --tool-name readproof_replay --tool-args-json '{"target":"'"$mid"'","include_content":true}'
[ "$rc" = 0 ] || fail "readproof_replay exited $rc"
check "$work/replay.json" 'r.result.structuredContent.all_match === true && r.result.structuredContent.entries[0].content === "Products can be refunded within 30 days.\n"' \
  "replay reproduces the mounted bytes"

say "isError for an unknown run"
insp "$work/bad.json" --method tools/call --tool-name readproof_run_mount --tool-args-json '{"run_id":"no-such-run","uri":"'"$URI"'"}'
[ "$rc" = 5 ] || fail "an unknown run must be a tool error (exit 5), got exit $rc: $(cat "$work/bad.json")"
check "$work/bad.json" 'r.result.isError === true && /unknown run/.test(r.result.content[0].text) && /hint:/.test(r.result.content[0].text)' \
  "isError with a message and a hint"

say "OK: the MCP Inspector ($INSPECTOR) agrees with readproof mcp"
