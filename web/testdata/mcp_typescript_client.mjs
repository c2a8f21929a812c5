// An agent on the official MCP TypeScript SDK, as a model's host would run it:
// request_approval, then wait_for_decision for 60 s with a progress callback.
// It prints one JSON event a line for the Go test (web/mcp_typescript_test.go):
// connected, filed {id}, progress {progress, total}, result {structured} or
// threw {message}, and error {message} for anything the SDK reports on its
// own (a "response for an unknown message ID" is one); once the script has
// begun to close, such reports are "closing" events (close() aborts any
// response stream whose end it has not yet read).
// Usage: node mcp_typescript_client.mjs URL TOKEN [CLIENT_TIMEOUT_MS]
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";

const [url, token, timeoutMs] = process.argv.slice(2);
const emit = (event) => process.stdout.write(JSON.stringify(event) + "\n");

const client = new Client({ name: "gatehouse-typescript-test", version: "1" });
let closing = false;
client.onerror = (err) => emit({ event: closing ? "closing" : "error", message: String(err?.message ?? err) });
const transport = new StreamableHTTPClientTransport(new URL(url), {
  requestInit: { headers: { Authorization: `Bearer ${token}` } },
});
await client.connect(transport);
emit({ event: "connected", protocol: transport.protocolVersion ?? "" });

const filed = await client.callTool({ name: "request_approval", arguments: { title: "Deploy v1.4 to production" } });
if (filed.isError) {
  emit({ event: "threw", message: JSON.stringify(filed.content) });
  process.exit(1);
}
emit({ event: "filed", id: filed.structuredContent.id });

// The SDK's default request timeout (60 s) unless the test scales it down.
const options = { onprogress: (p) => emit({ event: "progress", progress: p.progress, total: p.total ?? 0 }) };
if (timeoutMs) options.timeout = Number(timeoutMs);
const started = Date.now();
try {
  const res = await client.callTool(
    { name: "wait_for_decision", arguments: { id: filed.structuredContent.id, seconds: 60 } },
    undefined,
    options,
  );
  emit({ event: "result", isError: Boolean(res.isError), ms: Date.now() - started, structured: res.structuredContent ?? null });
} catch (err) {
  emit({ event: "threw", ms: Date.now() - started, message: String(err?.message ?? err) });
}
closing = true;
await client.close();
