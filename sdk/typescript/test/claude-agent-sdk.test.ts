// The Claude Agent SDK runs the real Claude Code (its bundled binary) against
// a mock Anthropic API; canUseTool asks a real gatehouse serve.

import assert from "node:assert/strict";
import { existsSync, mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { query } from "@anthropic-ai/claude-agent-sdk";
import { Gatehouse } from "../src/index.js";
import { canUseTool } from "../src/adapters/claude-agent-sdk.js";
import type { AdapterOptions } from "../src/adapters/common.js";
import { anthropic, decide, filings, forger, forgeries, proxyTrap, serve, withGuard, type Served } from "./harness.js";

interface Run {
  /** Whether the Bash command ran (it leaves a file). */
  ran: boolean;
  /** Whether the operator's edited command ran instead. */
  edited: boolean;
  /** The tool results the model saw. */
  results: string[];
}

/** run drives Claude Code to one Bash call, the adapter built on client. */
async function run(client: Gatehouse, onFiled: AdapterOptions["onFiled"], timeoutMs = 60_000, offerEdit = false): Promise<Run> {
  const model = await anthropic("touch ran.txt");
  const trap = await proxyTrap();
  const home = mkdtempSync(join(tmpdir(), "gatehouse-claude-"));
  const project = join(home, "project");
  mkdirSync(project);
  try {
    const q = query({
      prompt: "Run the command.",
      options: {
        cwd: project,
        maxTurns: 4,
        settingSources: [],
        canUseTool: canUseTool({ client, timeoutMs, onFiled, offerEdit }),
        // Offline: the model is the mock; nothing else is reached.
        env: {
          PATH: process.env.PATH,
          HOME: home,
          ANTHROPIC_BASE_URL: model.url,
          ANTHROPIC_API_KEY: "sk-ant-gatehouse-test-dummy",
          CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: "1",
          DISABLE_AUTOUPDATER: "1",
          DISABLE_TELEMETRY: "1",
          DISABLE_ERROR_REPORTING: "1",
          // The trap: a request to anywhere but 127.0.0.1 fails the test.
          HTTPS_PROXY: trap.url,
          HTTP_PROXY: trap.url,
          NO_PROXY: "127.0.0.1,localhost",
        },
      },
    });
    await withGuard(
      (async () => {
        for await (const _ of q) {
          /* drain */
        }
      })(),
      "Claude Code did not finish",
    );
    assert.deepEqual(trap.caught, [], "Claude Code reached past the mock");
    return { ran: existsSync(join(project, "ran.txt")), edited: existsSync(join(project, "edited.txt")), results: model.results };
  } finally {
    await model.close();
    await trap.close();
    rmSync(home, { recursive: true, force: true });
  }
}

describe("Claude Agent SDK canUseTool", () => {
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
    assert.equal(r.tool, "Bash");
    assert.equal(r.command, "touch ran.txt");
    await decide(s, r, "allow");
    const got = await ran;
    assert.ok(got.ran, "the allowed command did not run");
  });

  it("runs the operator's edited input on an edit", async () => {
    const f = filings();
    const ran = run(s.agent, f.onFiled, 60_000, true);
    const r = await f.next();
    assert.deepEqual(r.options!.map((o) => o.id), ["once", "edit", "deny"]);
    await s.operator.decide(r.id, { version: r.version, decision: "edit", answer: '{"command":"touch edited.txt"}' });
    const got = await ran;
    assert.deepEqual([got.ran, got.edited], [false, true]);
  });

  it("refuses the tool on a deny, and the model reads the operator's note", async () => {
    const f = filings();
    const ran = run(s.agent, f.onFiled);
    await decide(s, await f.next(), "deny", "not on a Friday");
    const got = await ran;
    assert.equal(got.ran, false);
    assert.match(got.results.join("\n"), /not on a Friday/);
  });

  it("refuses the tool when no decision comes in time", async () => {
    const f = filings();
    const got = await run(s.agent, f.onFiled, 1_500);
    assert.equal(got.ran, false);
    assert.match(got.results.join("\n"), /no decision came in time/);
    assert.equal((await s.operator.get((await f.next()).id)).status, "cancelled");
  });

  for (const [name, forge] of Object.entries(forgeries(() => s))) {
    it(`never runs the tool on ${name}`, async () => {
      const proxy = await forger(s.url, forge);
      try {
        const got = await run(new Gatehouse({ url: proxy.url, token: s.agentToken }), undefined);
        assert.equal(got.ran, false);
        assert.match(got.results.join("\n"), /not made on this call/);
      } finally {
        await proxy.close();
      }
    });
  }
});
