// An editor on the official ACP TypeScript SDK (@agentclientprotocol/sdk),
// driven line by line by a Go test. It starts the agent command given as its
// arguments (an ACP agent, or `gatehouse acp -- AGENT...`), initializes it,
// then follows the test's commands, one JSON object per line on stdin:
//
//   {"op":"new","id":"a","cwd":"/tmp/x"}        session/new
//   {"op":"prompt","id":"a","text":"..."}       session/prompt (not awaited)
//   {"op":"cancel","id":"a"}                     session/cancel
//   {"op":"answer","req":1,"optionId":"allow"}   answers a permission request
//   {"op":"answer","req":1,"cancelled":true}     answers it "cancelled"
//   {"op":"close"}                               closes the agent's stdin
//
// and reports what happens, one JSON object per line on stdout:
//
//   {"event":"spawned","pid":123}                the agent command's process
//   {"event":"ready","agentInfo":{...}}
//   {"event":"session","id":"a","sessionId":"..."}
//   {"event":"permission","req":1,"sessionId":"...","toolCall":{...},"options":[...]}
//   {"event":"permission_aborted","req":1}       the agent withdrew it ($/cancel_request)
//   {"event":"answer_dropped","req":1}           an answer to a withdrawn request
//   {"event":"stop","id":"a","stopReason":"end_turn"}
//   {"event":"error","id":"a","op":"prompt","message":"..."}
//   {"event":"agent_exit","code":0,"signal":null}
//
// A permission request waits for the test's answer: the test decides when
// (and whether) the editor answers.
import { spawn } from "node:child_process";
import { createInterface } from "node:readline";
import { Readable, Writable } from "node:stream";
import * as acp from "@agentclientprotocol/sdk";

const [command, ...args] = process.argv.slice(2);
if (!command) {
  console.error("usage: editor.mjs AGENT [ARGS...]");
  process.exit(2);
}

const emit = (event) => process.stdout.write(JSON.stringify(event) + "\n");

const agent = spawn(command, args, { stdio: ["pipe", "pipe", "inherit"] });
emit({ event: "spawned", pid: agent.pid });
agent.on("exit", (code, signal) => {
  emit({ event: "agent_exit", code, signal });
});
agent.on("error", (err) => emit({ event: "error", op: "spawn", message: String(err) }));
// A write to an agent that has gone is reported by its exit, not a crash.
agent.stdin.on("error", () => {});

const pending = new Map(); // req -> resolve(answer)
let nextReq = 0;

const app = acp
  .client({ name: "gatehouse-acp-editor" })
  .onRequest(acp.methods.client.session.requestPermission, (ctx) => {
    const req = ++nextReq;
    const { sessionId, toolCall, options } = ctx.params;
    emit({ event: "permission", req, sessionId, toolCall, options });
    return new Promise((resolve) => {
      pending.set(req, resolve);
      ctx.signal.addEventListener("abort", () => {
        if (pending.delete(req)) {
          emit({ event: "permission_aborted", req });
          resolve({ outcome: { outcome: "cancelled" } });
        }
      });
    });
  })
  .onNotification(acp.methods.client.session.update, () => {});

const conn = app.connect(
  acp.ndJsonStream(Writable.toWeb(agent.stdin), Readable.toWeb(agent.stdout)),
);
const sessions = new Map(); // test's id -> sessionId

try {
  const init = await conn.agent.request(acp.methods.agent.initialize, {
    protocolVersion: acp.PROTOCOL_VERSION,
    clientCapabilities: { fs: { readTextFile: false, writeTextFile: false }, terminal: false },
    clientInfo: { name: "gatehouse-acpclient", version: "1.0.0" },
  });
  emit({ event: "ready", agentInfo: init.agentInfo ?? null });
} catch (err) {
  emit({ event: "error", op: "initialize", message: String(err?.message ?? err) });
}

const failed = (id, op) => (err) =>
  emit({ event: "error", id, op, message: String(err?.message ?? err), data: err?.data ?? null });

for await (const line of createInterface({ input: process.stdin })) {
  if (!line.trim()) continue;
  const cmd = JSON.parse(line);
  switch (cmd.op) {
    case "new":
      conn.agent
        .request(acp.methods.agent.session.new, { cwd: cmd.cwd, mcpServers: [] })
        .then((res) => {
          sessions.set(cmd.id, res.sessionId);
          emit({ event: "session", id: cmd.id, sessionId: res.sessionId });
        }, failed(cmd.id, "new"));
      break;
    case "prompt":
      conn.agent
        .request(acp.methods.agent.session.prompt, {
          sessionId: sessions.get(cmd.id),
          prompt: [{ type: "text", text: cmd.text }],
        })
        .then((res) => emit({ event: "stop", id: cmd.id, stopReason: res.stopReason }), failed(cmd.id, "prompt"));
      break;
    case "cancel":
      conn.agent
        .notify(acp.methods.agent.session.cancel, { sessionId: sessions.get(cmd.id) })
        .catch(failed(cmd.id, "cancel"));
      break;
    case "answer": {
      const resolve = pending.get(cmd.req);
      if (!pending.delete(cmd.req)) {
        // Withdrawn meanwhile ($/cancel_request): the answer has no one to go to.
        emit({ event: "answer_dropped", req: cmd.req });
        break;
      }
      resolve(
        cmd.cancelled
          ? { outcome: { outcome: "cancelled" } }
          : { outcome: { outcome: "selected", optionId: cmd.optionId } },
      );
      break;
    }
    case "close":
      agent.stdin.end();
      break;
    default:
      emit({ event: "error", op: cmd.op, message: "unknown op" });
  }
}
// The test closed our stdin: so does the editor to the agent's.
agent.stdin.end();
