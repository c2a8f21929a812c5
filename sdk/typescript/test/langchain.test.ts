// LangChain v1: createAgent with humanInTheLoopMiddleware, its model
// ChatOpenAI against a mock Chat Completions API; the adapter decides the
// middleware's interrupts through a real gatehouse serve.

import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { Command, MemorySaver } from "@langchain/langgraph";
import { ChatOpenAI } from "@langchain/openai";
import { createAgent, humanInTheLoopMiddleware, tool } from "langchain";
import { z } from "zod";
import { Gatehouse } from "../src/index.js";
import type { AdapterOptions } from "../src/adapters/common.js";
import { invokeWithGatehouse } from "../src/adapters/langchain.js";
import { decide, filings, forger, forgeries, openAIChat, serve, withGuard, type Served } from "./harness.js";

async function run(client: Gatehouse, onFiled: AdapterOptions["onFiled"], timeoutMs = 60_000) {
  const mock = await openAIChat("write_file", { path: "notes.txt", text: "hello" });
  const written: string[] = [];
  const writeFile = tool(
    async ({ path, text }) => {
      written.push(`${path}:${text}`);
      return `wrote ${path}`;
    },
    { name: "write_file", description: "Write a file.", schema: z.object({ path: z.string(), text: z.string() }) },
  );
  const agent = createAgent({
    model: new ChatOpenAI({ model: "gpt-mock", apiKey: "sk-gatehouse-test", configuration: { baseURL: mock.url }, maxRetries: 0 }),
    tools: [writeFile],
    middleware: [humanInTheLoopMiddleware({ interruptOn: { write_file: { allowedDecisions: ["approve", "edit", "reject"] } } })],
    checkpointer: new MemorySaver(),
  });
  const config = { configurable: { thread_id: "t1" } };
  try {
    await withGuard(
      invokeWithGatehouse(
        () => agent.invoke({ messages: [{ role: "user", content: "Write the notes." }] }, config),
        (resume) => agent.invoke(new Command({ resume }), config),
        { client, timeoutMs, onFiled },
      ),
      "the agent did not finish",
    );
    return { written, results: mock.results };
  } finally {
    await mock.close();
  }
}

describe("LangChain humanInTheLoopMiddleware", () => {
  let s: Served;
  before(async () => {
    s = await serve();
  });
  after(async () => {
    await s?.close();
  });

  it("approves on an allow", async () => {
    const f = filings();
    const ran = run(s.agent, f.onFiled);
    const r = await f.next();
    assert.equal(r.tool, "write_file");
    assert.deepEqual(r.options!.map((o) => o.id), ["approve", "edit", "reject"]);
    await decide(s, r, "allow");
    const got = await ran;
    assert.deepEqual(got.written, ["notes.txt:hello"]);
    assert.match(got.results.join("\n"), /wrote notes.txt/);
  });

  it("runs the operator's edited arguments on an edit", async () => {
    const f = filings();
    const ran = run(s.agent, f.onFiled);
    const r = await f.next();
    await s.operator.decide(r.id, { version: r.version, decision: "edit", answer: '{"path":"notes.txt","text":"hello, reviewed"}' });
    const got = await ran;
    assert.deepEqual(got.written, ["notes.txt:hello, reviewed"]);
  });

  it("rejects on a deny, and the model reads the operator's note", async () => {
    const f = filings();
    const ran = run(s.agent, f.onFiled);
    await decide(s, await f.next(), "deny", "put notes in the wiki");
    const got = await ran;
    assert.deepEqual(got.written, []);
    assert.match(got.results.join("\n"), /put notes in the wiki/);
  });

  it("rejects when no decision comes in time", async () => {
    const f = filings();
    const got = await run(s.agent, f.onFiled, 1_500);
    assert.deepEqual(got.written, []);
    assert.match(got.results.join("\n"), /no decision came in time/);
  });

  for (const [name, forge] of Object.entries(forgeries(() => s))) {
    it(`never approves on ${name}`, async () => {
      const proxy = await forger(s.url, forge);
      try {
        const got = await run(new Gatehouse({ url: proxy.url, token: s.agentToken }), undefined);
        assert.deepEqual(got.written, []);
        assert.match(got.results.join("\n"), /not made on this call/);
      } finally {
        await proxy.close();
      }
    });
  }
});
