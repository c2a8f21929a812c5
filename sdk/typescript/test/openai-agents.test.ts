// The OpenAI Agents SDK against a mock Chat Completions API: a tool with
// needsApproval interrupts the run; the adapter asks a real gatehouse serve.

import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { Agent, OpenAIProvider, Runner, tool } from "@openai/agents";
import { z } from "zod";
import { Gatehouse } from "../src/index.js";
import type { AdapterOptions } from "../src/adapters/common.js";
import { runWithGatehouse } from "../src/adapters/openai-agents.js";
import { decide, filings, forger, forgeries, openAIChat, serve, withGuard, type Served } from "./harness.js";

async function run(client: Gatehouse, onFiled: AdapterOptions["onFiled"], timeoutMs = 60_000) {
  const model = await openAIChat("delete_branch", { branch: "release-1.2" });
  const deleted: string[] = [];
  const deleteBranch = tool({
    name: "delete_branch",
    description: "Delete a git branch on the remote.",
    parameters: z.object({ branch: z.string() }),
    needsApproval: true,
    execute: async ({ branch }) => {
      deleted.push(branch);
      return `deleted ${branch}`;
    },
  });
  const agent = new Agent({ name: "Release bot", instructions: "Tidy the branches.", tools: [deleteBranch], model: "gpt-mock" });
  const runner = new Runner({ modelProvider: new OpenAIProvider({ apiKey: "sk-gatehouse-test", baseURL: model.url, useResponses: false }), tracingDisabled: true });
  try {
    const result = await withGuard(
      runWithGatehouse((input) => runner.run(agent, input), "Delete the release branch.", { client, timeoutMs, onFiled }),
      "the run did not finish",
    );
    return { deleted, results: model.results, output: String(result.finalOutput) };
  } finally {
    await model.close();
  }
}

describe("OpenAI Agents SDK tool approval", () => {
  let s: Served;
  before(async () => {
    s = await serve();
  });
  after(async () => {
    await s?.close();
  });

  it("approves the call on an allow", async () => {
    const f = filings();
    const ran = run(s.agent, f.onFiled);
    const r = await f.next();
    assert.equal(r.tool, "delete_branch");
    assert.equal(r.command, '{"branch":"release-1.2"}');
    await decide(s, r, "allow");
    const got = await ran;
    assert.deepEqual(got.deleted, ["release-1.2"]);
    assert.match(got.results.join("\n"), /deleted release-1.2/);
  });

  it("rejects the call on a deny, and the model reads the operator's note", async () => {
    const f = filings();
    const ran = run(s.agent, f.onFiled);
    await decide(s, await f.next(), "deny", "keep it until Monday");
    const got = await ran;
    assert.deepEqual(got.deleted, []);
    assert.match(got.results.join("\n"), /keep it until Monday/);
  });

  it("rejects the call when no decision comes in time", async () => {
    const f = filings();
    const got = await run(s.agent, f.onFiled, 1_500);
    assert.deepEqual(got.deleted, []);
    assert.match(got.results.join("\n"), /no decision came in time/);
  });

  for (const [name, forge] of Object.entries(forgeries(() => s))) {
    it(`never approves the call on ${name}`, async () => {
      const proxy = await forger(s.url, forge);
      try {
        const got = await run(new Gatehouse({ url: proxy.url, token: s.agentToken }), undefined);
        assert.deepEqual(got.deleted, []);
        assert.match(got.results.join("\n"), /not made on this call/);
      } finally {
        await proxy.close();
      }
    });
  }
});
