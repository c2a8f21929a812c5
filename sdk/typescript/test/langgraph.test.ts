// LangGraph JS: a graph whose review node calls interrupt() with an Agent
// Inbox HumanInterrupt, its model ChatOpenAI against a mock Chat Completions
// API; the adapter answers through a real gatehouse serve.

import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { HumanMessage, ToolMessage, type AIMessage } from "@langchain/core/messages";
import { Command, END, MemorySaver, MessagesAnnotation, START, StateGraph, interrupt } from "@langchain/langgraph";
import type { HumanInterrupt, HumanResponse } from "@langchain/langgraph/prebuilt";
import { ChatOpenAI } from "@langchain/openai";
import { Gatehouse } from "../src/index.js";
import type { AdapterOptions } from "../src/adapters/common.js";
import { invokeWithGatehouse } from "../src/adapters/langgraph.js";
import { decide, filings, forger, forgeries, openAIChat, serve, withGuard, type Served } from "./harness.js";

async function run(client: Gatehouse, onFiled: AdapterOptions["onFiled"], timeoutMs = 60_000) {
  const mock = await openAIChat("drop_table", { table: "sessions" });
  const dropped: string[] = [];
  const llm = new ChatOpenAI({ model: "gpt-mock", apiKey: "sk-gatehouse-test", configuration: { baseURL: mock.url }, maxRetries: 0 }).bindTools([
    { type: "function", function: { name: "drop_table", description: "Drop a database table.", parameters: { type: "object", properties: { table: { type: "string" } }, required: ["table"] } } },
  ]);
  const graph = new StateGraph(MessagesAnnotation)
    .addNode("agent", async (s) => ({ messages: [await llm.invoke(s.messages)] }))
    .addNode("review", async (s) => {
      const call = (s.messages.at(-1) as AIMessage).tool_calls![0]!;
      const [answer] = interrupt<HumanInterrupt[], HumanResponse[]>([
        {
          action_request: { action: call.name, args: call.args },
          config: { allow_accept: true, allow_edit: true, allow_respond: true, allow_ignore: true },
          description: "The agent wants to drop a table.",
        },
      ]);
      let content: string;
      if (answer!.type === "accept" || answer!.type === "edit") {
        const args = answer!.type === "edit" ? (answer!.args as unknown as { args: { table: string } }).args : (call.args as { table: string });
        dropped.push(args.table);
        content = `dropped ${args.table}`;
      } else if (answer!.type === "response") {
        content = String(answer!.args);
      } else {
        content = "The user ignored this call.";
      }
      return { messages: [new ToolMessage({ content, tool_call_id: call.id! })] };
    })
    .addEdge(START, "agent")
    .addConditionalEdges("agent", (s) => ((s.messages.at(-1) as AIMessage).tool_calls?.length ? "review" : END))
    .addEdge("review", "agent")
    .compile({ checkpointer: new MemorySaver() });
  const config = { configurable: { thread_id: "t1" } };
  try {
    await withGuard(
      invokeWithGatehouse(
        () => graph.invoke({ messages: [new HumanMessage("Drop the sessions table.")] }, config),
        (resume) => graph.invoke(new Command({ resume }), config),
        { client, timeoutMs, onFiled },
      ),
      "the graph did not finish",
    );
    return { dropped, results: mock.results };
  } finally {
    await mock.close();
  }
}

describe("LangGraph interrupt() with HumanInterrupt", () => {
  let s: Served;
  before(async () => {
    s = await serve();
  });
  after(async () => {
    await s?.close();
  });

  it("accepts on an allow", async () => {
    const f = filings();
    const ran = run(s.agent, f.onFiled);
    const r = await f.next();
    assert.equal(r.tool, "drop_table");
    assert.deepEqual(r.options!.map((o) => o.id), ["accept", "edit", "respond", "ignore"]);
    await decide(s, r, "allow");
    const got = await ran;
    assert.deepEqual(got.dropped, ["sessions"]);
  });

  it("runs the operator's edited arguments on an edit", async () => {
    const f = filings();
    const ran = run(s.agent, f.onFiled);
    const r = await f.next();
    await s.operator.decide(r.id, { version: r.version, decision: "edit", answer: '{"table":"sessions_2019"}' });
    const got = await ran;
    assert.deepEqual(got.dropped, ["sessions_2019"]);
  });

  it("answers the operator's words instead of running it on a respond", async () => {
    const f = filings();
    const ran = run(s.agent, f.onFiled);
    const r = await f.next();
    await s.operator.decide(r.id, { version: r.version, decision: "respond", answer: "Archive it first." });
    const got = await ran;
    assert.deepEqual(got.dropped, []);
    assert.match(got.results.join("\n"), /Archive it first/);
  });

  it("does not run it on a deny, and the model reads the operator's note", async () => {
    const f = filings();
    const ran = run(s.agent, f.onFiled);
    await decide(s, await f.next(), "deny", "that table is still read by billing");
    const got = await ran;
    assert.deepEqual(got.dropped, []);
    assert.match(got.results.join("\n"), /still read by billing/);
  });

  it("does not run it when no decision comes in time", async () => {
    const f = filings();
    const got = await run(s.agent, f.onFiled, 1_500);
    assert.deepEqual(got.dropped, []);
    assert.match(got.results.join("\n"), /no decision came in time/);
  });

  for (const [name, forge] of Object.entries(forgeries(() => s))) {
    it(`never runs it on ${name}`, async () => {
      const proxy = await forger(s.url, forge);
      try {
        const got = await run(new Gatehouse({ url: proxy.url, token: s.agentToken }), undefined);
        assert.deepEqual(got.dropped, []);
        assert.match(got.results.join("\n"), /not made on this call/);
      } finally {
        await proxy.close();
      }
    });
  }
});
