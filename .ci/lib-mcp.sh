# Shared by .ci/mcp-inspector.sh and .ci/mcp-http.sh (sourced, not run;
# .ci/run sources it for INSPECTOR). The sourcing script defines fail and
# sets $work before calling the functions.

# The MCP Inspector CLI both scripts run, pinned.
INSPECTOR="@modelcontextprotocol/inspector@2.12.0"

# capture OUT CMD...: run CMD in $work without stopping on its failure;
# stdout to OUT, stderr to OUT.err, the exit code in $rc.
capture() {
  local out=$1; shift
  set +e
  (cd "$work" && "$@") >"$out" 2>"$out.err"
  rc=$?
  set -e
}

# check FILE JS-EXPR DESCRIPTION: evaluate a JavaScript expression over the
# parsed JSON in `r`; it must be true, else fail DESCRIPTION.
check() {
  node -e '
    const fs = require("fs");
    const [file, expr, what] = process.argv.slice(1);
    let r;
    try { r = JSON.parse(fs.readFileSync(file, "utf8")); } catch (e) {
      console.error("not JSON: " + fs.readFileSync(file, "utf8").slice(0, 500)); process.exit(1); }
    let ok = false;
    try { ok = Function("r", "return (" + expr + ");")(r); } catch (e) { console.error(e.message); }
    if (!ok) { console.error("mismatch: " + what + "\n" + JSON.stringify(r).slice(0, 1500)); process.exit(1); }
  ' "$1" "$2" "$3" || fail "$3"
}
