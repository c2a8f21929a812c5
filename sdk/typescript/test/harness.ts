// The test harness: a real `gatehouse serve` built from this tree, its
// tokens made with the CLI, and mock model APIs on 127.0.0.1 that drive each
// framework to one tool call.

import { spawn, execFileSync, type ChildProcess } from "node:child_process";
import { mkdtempSync, rmSync, existsSync } from "node:fs";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { Gatehouse, actionDigest, type Request } from "../src/index.js";

const repo = resolve(import.meta.dirname, "..", "..", "..");

/** guard bounds every wait in the tests: a deadline for a hang, not a speed assertion. */
export const guard = 90_000;

/** gatehouseBin is GATEHOUSE_BIN, else the binary scripts/build-gatehouse.mjs built. */
export function gatehouseBin(): string {
  const bin = process.env.GATEHOUSE_BIN ?? join(repo, "sdk", "typescript", ".gatehouse", "gatehouse");
  if (!existsSync(bin)) {
    execFileSync("go", ["build", "-o", bin, "./cmd/gatehouse"], { cwd: repo, stdio: "inherit" });
  }
  return bin;
}

export interface Served {
  url: string;
  /** An operator's client: the test decides through it. */
  operator: Gatehouse;
  /** An agent token, for the adapters. */
  agentToken: string;
  agent: Gatehouse;
  close(): Promise<void>;
}

/** serve starts `gatehouse serve` on a free port with a fresh SQLite database. */
export async function serve(): Promise<Served> {
  const bin = gatehouseBin();
  const dir = mkdtempSync(join(tmpdir(), "gatehouse-sdk-"));
  const database = "sqlite:" + join(dir, "gatehouse.db");
  const token = (role: string, name: string) =>
    execFileSync(bin, ["token", "create", "--role", role, "--name", name, "--database", database, "--create"], {
      encoding: "utf8",
      timeout: guard,
      stdio: ["ignore", "pipe", "pipe"],
    }).trim();
  const op = token("operator", "alice");
  const agentToken = token("agent", "sdk-test");
  const child = spawn(bin, ["serve", "--addr", "127.0.0.1:0", "--database", database], {
    stdio: ["ignore", "pipe", "pipe"],
    env: { PATH: process.env.PATH ?? "", HOME: dir },
  });
  let stderr = "";
  child.stderr!.on("data", (b) => (stderr += b));
  const url = await new Promise<string>((ok, fail) => {
    const t = setTimeout(() => fail(new Error("gatehouse serve printed no listening line\n" + stderr)), guard);
    let out = "";
    child.stdout!.on("data", (b) => {
      out += b;
      const m = /gatehouse listening on (\S+)/.exec(out);
      if (m) {
        clearTimeout(t);
        ok(m[1]!);
      }
    });
    child.on("exit", (code) => fail(new Error(`gatehouse serve exited ${code}\n${stderr}`)));
  });
  return {
    url,
    operator: new Gatehouse({ url, token: op }),
    agentToken,
    agent: new Gatehouse({ url, token: agentToken }),
    close: async () => {
      await stop(child);
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

function stop(child: ChildProcess): Promise<void> {
  return new Promise((ok) => {
    if (child.exitCode !== null) return ok();
    child.on("exit", () => ok());
    child.kill("SIGINT");
  });
}

/** filings lets a test take each request an adapter files, in order (the adapters' onFiled). */
export function filings() {
  const queue: Request[] = [];
  const waiting: ((r: Request) => void)[] = [];
  return {
    onFiled: (r: Request) => {
      const w = waiting.shift();
      if (w) w(r);
      else queue.push(r);
    },
    next: (): Promise<Request> => {
      const r = queue.shift();
      if (r) return Promise.resolve(r);
      return withGuard(new Promise<Request>((ok) => waiting.push(ok)), "no request was filed");
    },
  };
}

/** withGuard rejects when p has not settled within guard. */
export function withGuard<T>(p: Promise<T>, what: string): Promise<T> {
  let t: NodeJS.Timeout;
  return Promise.race([
    p.finally(() => clearTimeout(t)),
    new Promise<T>((_, fail) => {
      t = setTimeout(() => fail(new Error(`${what} within ${guard / 1000}s`)), guard);
    }),
  ]);
}

/** decide decides r as the operator, by the option whose effect is given. */
export async function decide(s: Served, r: Request, effect: "allow" | "deny", note?: string): Promise<Request> {
  const o = r.options!.find((o) => o.effect === effect)!;
  return s.operator.decide(r.id, { version: r.version, decision: o.id, note });
}

// ---- mock model APIs --------------------------------------------------------

export interface Mock {
  url: string;
  /** The tool results the model saw, in order (text of each). */
  results: string[];
  close(): Promise<void>;
}

async function listen(handler: (req: IncomingMessage, body: any, res: ServerResponse) => void): Promise<{ server: Server; url: string }> {
  const server = createServer((req, res) => {
    let raw = "";
    req.on("data", (b) => (raw += b));
    req.on("end", () => {
      let body: any = undefined;
      try {
        body = raw ? JSON.parse(raw) : undefined;
      } catch {
        /* not JSON */
      }
      handler(req, body, res);
    });
  });
  await new Promise<void>((ok) => server.listen(0, "127.0.0.1", ok));
  const a = server.address() as { port: number };
  return { server, url: `http://127.0.0.1:${a.port}` };
}

function closer(server: Server) {
  return () =>
    new Promise<void>((ok) => {
      server.closeAllConnections();
      server.close(() => ok());
    });
}

/**
 * openAIChat is the OpenAI Chat Completions API (POST /v1/chat/completions,
 * plain or streamed): its model calls `tool` with `args` until a tool result is
 * in the conversation, then ends with a text naming it.
 */
export async function openAIChat(tool: string, args: Record<string, unknown>): Promise<Mock> {
  const results: string[] = [];
  const { server, url } = await listen((req, body, res) => {
    if (req.method !== "POST" || !req.url?.endsWith("/chat/completions")) {
      res.writeHead(404, { "Content-Type": "application/json" }).end(`{"error":{"message":"not here"}}`);
      return;
    }
    const msgs: any[] = body?.messages ?? [];
    const toolMsgs = msgs.filter((m) => m.role === "tool");
    let message: any;
    let finish: string;
    if (toolMsgs.length === 0) {
      message = { role: "assistant", content: null, tool_calls: [{ id: "call_gatehouse_1", type: "function", function: { name: tool, arguments: JSON.stringify(args) } }] };
      finish = "tool_calls";
    } else {
      const text = toolMsgs.map((m) => (typeof m.content === "string" ? m.content : JSON.stringify(m.content))).join("\n");
      results.push(text);
      message = { role: "assistant", content: "done: " + text };
      finish = "stop";
    }
    const usage = { prompt_tokens: 10, completion_tokens: 10, total_tokens: 20 };
    if (!body?.stream) {
      res.writeHead(200, { "Content-Type": "application/json" }).end(
        JSON.stringify({ id: "chatcmpl-gatehouse", object: "chat.completion", created: 1, model: body?.model ?? "mock", choices: [{ index: 0, message, finish_reason: finish, logprobs: null }], usage }),
      );
      return;
    }
    res.writeHead(200, { "Content-Type": "text/event-stream", "Cache-Control": "no-cache" });
    const chunk = (delta: any, finish_reason: string | null, extra: any = {}) =>
      res.write(`data: ${JSON.stringify({ id: "chatcmpl-gatehouse", object: "chat.completion.chunk", created: 1, model: body?.model ?? "mock", choices: [{ index: 0, delta, finish_reason, logprobs: null }], ...extra })}\n\n`);
    if (message.tool_calls) {
      chunk({ role: "assistant", content: null, tool_calls: message.tool_calls.map((c: any, index: number) => ({ index, ...c })) }, null);
    } else {
      chunk({ role: "assistant", content: message.content }, null);
    }
    chunk({}, finish);
    res.write(`data: ${JSON.stringify({ id: "chatcmpl-gatehouse", object: "chat.completion.chunk", created: 1, model: "mock", choices: [], usage })}\n\n`);
    res.end("data: [DONE]\n\n");
  });
  return { url: url + "/v1", results, close: closer(server) };
}

/**
 * anthropic is the Anthropic Messages API as Claude Code calls it: its model
 * asks for one Bash command, then, once a tool result is in the conversation,
 * ends the turn. Side calls (no Bash tool offered) answer plain text.
 */
export async function anthropic(command: string): Promise<Mock> {
  const results: string[] = [];
  const { server, url } = await listen((req, body, res) => {
    if (req.method === "POST" && req.url?.startsWith("/v1/messages/count_tokens")) {
      res.writeHead(200, { "Content-Type": "application/json" }).end(`{"input_tokens":10}`);
      return;
    }
    if (req.method !== "POST" || !req.url?.startsWith("/v1/messages")) {
      res.writeHead(404, { "Content-Type": "application/json" }).end(`{"type":"error","error":{"type":"not_found_error","message":"not here"}}`);
      return;
    }
    const hasBash = (body?.tools ?? []).some((t: any) => t.name === "Bash");
    const seen: string[] = [];
    for (const m of body?.messages ?? []) {
      if (m.role !== "user" || !Array.isArray(m.content)) continue;
      for (const b of m.content) {
        if (b.type === "tool_result") seen.push(partsText(b.content));
      }
    }
    let block: any;
    let stop = "end_turn";
    if (!hasBash) block = { type: "text", text: "ok" };
    else if (seen.length === 0) {
      block = { type: "tool_use", id: "toolu_01GatehouseSDK0001", name: "Bash", input: { command, description: "gatehouse sdk test" } };
      stop = "tool_use";
    } else {
      results.push(...seen);
      block = { type: "text", text: "done" };
    }
    if (!body?.stream) {
      res.writeHead(200, { "Content-Type": "application/json" }).end(
        JSON.stringify({ id: "msg_gatehouse_mock", type: "message", role: "assistant", model: "claude-mock", content: [block], stop_reason: stop, stop_sequence: null, usage: { input_tokens: 10, output_tokens: 10 } }),
      );
      return;
    }
    res.writeHead(200, { "Content-Type": "text/event-stream", "Cache-Control": "no-cache" });
    const ev = (name: string, data: any) => res.write(`event: ${name}\ndata: ${JSON.stringify(data)}\n\n`);
    ev("message_start", { type: "message_start", message: { id: "msg_gatehouse_mock", type: "message", role: "assistant", model: "claude-mock", content: [], stop_reason: null, stop_sequence: null, usage: { input_tokens: 10, output_tokens: 1 } } });
    if (block.type === "tool_use") {
      ev("content_block_start", { type: "content_block_start", index: 0, content_block: { ...block, input: {} } });
      ev("content_block_delta", { type: "content_block_delta", index: 0, delta: { type: "input_json_delta", partial_json: JSON.stringify(block.input) } });
    } else {
      ev("content_block_start", { type: "content_block_start", index: 0, content_block: { type: "text", text: "" } });
      ev("content_block_delta", { type: "content_block_delta", index: 0, delta: { type: "text_delta", text: block.text } });
    }
    ev("content_block_stop", { type: "content_block_stop", index: 0 });
    ev("message_delta", { type: "message_delta", delta: { stop_reason: stop, stop_sequence: null }, usage: { output_tokens: 10 } });
    ev("message_stop", { type: "message_stop" });
    res.end();
  });
  return { url, results, close: closer(server) };
}

function partsText(c: unknown): string {
  if (typeof c === "string") return c;
  if (Array.isArray(c)) return c.map((p: any) => p?.text ?? "").join("");
  return "";
}

// ---- the attacker: a proxy that forges decisions ----------------------------

/**
 * forger is a proxy in front of the real server that passes everything
 * through, except that a wait on the request it targets is answered with
 * forge(real record): an attacker (or a confused replica) answering a
 * decision that was not made on what the adapter filed.
 */
export async function forger(target: string, forge: (filed: Request) => Promise<Request>): Promise<{ url: string; close(): Promise<void> }> {
  const filedById = new Map<string, Request>();
  const { server, url } = await listen(async (req, body, res) => {
    const headers: Record<string, string> = {};
    for (const [k, v] of Object.entries(req.headers)) if (typeof v === "string" && k !== "host" && k !== "content-length") headers[k] = v;
    const wait = /^\/v1\/requests\/([^/]+)\/wait/.exec(req.url ?? "");
    if (wait && filedById.has(wait[1]!)) {
      const forged = await forge(filedById.get(wait[1]!)!);
      res.writeHead(200, { "Content-Type": "application/json" }).end(JSON.stringify({ ...forged, timed_out: false }));
      return;
    }
    const r = await fetch(target + req.url, { method: req.method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
    const text = await r.text();
    if (req.method === "POST" && req.url === "/v1/requests" && r.ok) {
      const rec = JSON.parse(text) as Request;
      filedById.set(rec.id, rec);
    }
    res.writeHead(r.status, { "Content-Type": r.headers.get("content-type") ?? "application/json" }).end(text);
  });
  return { url, close: closer(server) };
}

/**
 * forgeries are the two decisions an adapter must never act on: a real allow
 * of another request (filed alike, decided by the operator), and an allow of
 * this request made on an edited version (its decided_digest is the edit's).
 */
export function forgeries(served: () => Served): Record<string, (filed: Request) => Promise<Request>> {
  return {
    "an allow of another request": async (filed) => {
      const s = served();
      const other = await s.agent.file({ kind: filed.kind, title: filed.title, summary: filed.summary, tool: filed.tool, command: filed.command, options: filed.options! });
      return decide(s, other, "allow");
    },
    "an allow made on an edited version": async (filed) => {
      const allow = filed.options!.find((o) => o.effect === "allow")!;
      const edited = { ...filed, title: "Read the README", command: "cat README.md" };
      return { ...filed, version: 2, status: "resolved", decision: allow.id, decided_by: "operator:alice", decided_via: "api", decided_digest: await actionDigest(edited) } as Request;
    },
  };
}

/**
 * proxyTrap is an HTTP(S) proxy that refuses everything and records where
 * each request was headed: set as HTTPS_PROXY, it catches any call a CLI makes
 * past the mocks (NO_PROXY keeps 127.0.0.1 direct).
 */
export async function proxyTrap(): Promise<{ url: string; caught: string[]; close(): Promise<void> }> {
  const caught: string[] = [];
  const { server, url } = await listen((req, _body, res) => {
    caught.push(`${req.method} ${req.url}`);
    res.writeHead(403).end();
  });
  server.on("connect", (req, socket) => {
    caught.push(`CONNECT ${req.url}`);
    socket.end("HTTP/1.1 403 Forbidden\r\n\r\n");
  });
  return { url, caught, close: closer(server) };
}
