// The Vercel AI SDK against a mock Chat Completions API: a tool with
// needsApproval stops generateText on a tool-approval-request; the adapter
// asks a real gatehouse serve.

import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { createOpenAI } from "@ai-sdk/openai";
import { generateText, stepCountIs, tool } from "ai";
import { z } from "zod";
import { Gatehouse } from "../src/index.js";
import type { AdapterOptions } from "../src/adapters/common.js";
import { generateWithGatehouse } from "../src/adapters/ai-sdk.js";
import { decide, filings, forger, forgeries, openAIChat, serve, withGuard, type Served } from "./harness.js";

async function run(client: Gatehouse, onFiled: AdapterOptions["onFiled"], timeoutMs = 60_000) {
  const mock = await openAIChat("send_invoice", { customer: "ACME", amount: 1200 });
  const sent: string[] = [];
  const tools = {
    send_invoice: tool({
      description: "Email an invoice to a customer.",
      inputSchema: z.object({ customer: z.string(), amount: z.number() }),
      needsApproval: true,
      execute: async ({ customer, amount }) => {
        sent.push(`${customer}:${amount}`);
        return `sent ${amount} to ${customer}`;
      },
    }),
  };
  const model = createOpenAI({ baseURL: mock.url, apiKey: "sk-gatehouse-test" }).chat("gpt-mock");
  try {
    await withGuard(
      generateWithGatehouse((messages) => generateText({ model, tools, messages, stopWhen: stepCountIs(5) }), [{ role: "user", content: "Invoice ACME." }], {
        client,
        timeoutMs,
        onFiled,
      }),
      "the generation did not finish",
    );
    return { sent, results: mock.results };
  } finally {
    await mock.close();
  }
}

describe("Vercel AI SDK tool approval", () => {
  let s: Served;
  before(async () => {
    s = await serve();
  });
  after(async () => {
    await s?.close();
  });

  it("runs the tool on an allow", async () => {
    const f = filings();
    const ran = run(s.agent, f.onFiled);
    const r = await f.next();
    assert.equal(r.tool, "send_invoice");
    assert.equal(r.command, '{"amount":1200,"customer":"ACME"}');
    await decide(s, r, "allow");
    const got = await ran;
    assert.deepEqual(got.sent, ["ACME:1200"]);
    assert.match(got.results.join("\n"), /sent 1200 to ACME/);
  });

  it("denies the tool on a deny, and the model reads the operator's note", async () => {
    const f = filings();
    const ran = run(s.agent, f.onFiled);
    await decide(s, await f.next(), "deny", "wait for the signed order");
    const got = await ran;
    assert.deepEqual(got.sent, []);
    assert.match(got.results.join("\n"), /wait for the signed order/);
  });

  it("denies the tool when no decision comes in time", async () => {
    const f = filings();
    const got = await run(s.agent, f.onFiled, 1_500);
    assert.deepEqual(got.sent, []);
    assert.match(got.results.join("\n"), /no decision came in time/);
  });

  for (const [name, forge] of Object.entries(forgeries(() => s))) {
    it(`never runs the tool on ${name}`, async () => {
      const proxy = await forger(s.url, forge);
      try {
        const got = await run(new Gatehouse({ url: proxy.url, token: s.agentToken }), undefined);
        assert.deepEqual(got.sent, []);
        assert.match(got.results.join("\n"), /not made on this call/);
      } finally {
        await proxy.close();
      }
    });
  }
});
