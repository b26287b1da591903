// A small agent on the official MCP TypeScript SDK: it connects to
// `readproof mcp --http` with a bearer token, opens a run, mounts the
// documents named on the command line, commits, and prints the manifest id
// on stdout (everything else goes to stderr).
//
//   READPROOF_MCP_URL=http://127.0.0.1:8765/ READPROOF_MCP_TOKEN=rpmcp_... \
//     npx tsx agent.ts readproof://demo/policies/refunds readproof://demo/policies/shipping
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";

const url = process.env.READPROOF_MCP_URL ?? "http://127.0.0.1:8765/";
const token = process.env.READPROOF_MCP_TOKEN ?? "";
const uris = process.argv.slice(2);
if (token === "" || uris.length === 0) {
  console.error("usage: READPROOF_MCP_TOKEN=rpmcp_... [READPROOF_MCP_URL=http://127.0.0.1:8765/] tsx agent.ts URI...");
  process.exit(2);
}

type Structured = Record<string, unknown>;

const client = new Client({ name: "readproof-agent-ts", version: "1.0.0" });
// The token travels in the Authorization header of every request; it is
// never printed.
const transport = new StreamableHTTPClientTransport(new URL(url), {
  requestInit: { headers: { Authorization: `Bearer ${token}` } },
});

// call runs one tool and returns its structured result; a tool error
// (isError) becomes an exception carrying readproof's message and hint.
async function call(name: string, args: Structured): Promise<Structured> {
  const res = await client.callTool({ name, arguments: args });
  if (res.isError) {
    const text = (res.content as Array<{ type: string; text?: string }>).map((c) => c.text ?? "").join("\n");
    throw new Error(`${name}: ${text}`);
  }
  return res.structuredContent as Structured;
}

try {
  await client.connect(transport);
  const runId = `agent-ts-${Date.now()}`;
  await call("readproof_run_start", { run_id: runId });
  for (const uri of uris) {
    const m = await call("readproof_run_mount", { run_id: runId, uri });
    console.error(`agent-ts: mounted ${uri} at position ${m.position} (${m.content_hash})`);
  }
  const c = await call("readproof_run_commit", { run_id: runId });
  console.error(`agent-ts: committed run ${runId} with ${c.entries} entries`);
  console.log(c.manifest_id);
} catch (e) {
  console.error(`agent-ts: ${e instanceof Error ? e.message : String(e)}`);
  process.exitCode = 1;
} finally {
  await client.close();
}
