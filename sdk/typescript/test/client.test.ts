import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import canonicalize from "canonicalize";
import { Gatehouse, actionDigest, canonicalJSON, filedAs, type NewRequest } from "../src/index.js";
import { decide, filings, serve, withGuard, type Served } from "./harness.js";

const req: NewRequest = {
  kind: "permission",
  title: "Run rm -rf build/ <now> & \"then\" 🚀",
  summary: "clean the build",
  tool: "Bash",
  command: "rm -rf build/",
  source_ref: { session: "s1", cwd: "/srv/app" },
  options: [
    { id: "once", label: "Allow once", effect: "allow" },
    { id: "deny", label: "Deny", effect: "deny" },
  ],
};

describe("canonical JSON", () => {
  it("agrees with the RFC 8785 reference implementation", () => {
    for (const v of [req, { b: [1, 2.5, -0, 1e21, 1e-7], a: "\u0001\u2028é", "\u00e9": null, "\ud83d\ude80": true, A: {} }]) {
      assert.equal(canonicalJSON(v), canonicalize(v));
    }
  });
});

describe("client against gatehouse serve", () => {
  let s: Served;
  before(async () => {
    s = await serve();
  });
  after(async () => {
    await s?.close();
  });

  it("computes the action digest as the server does", async () => {
    const r = await s.agent.file(req);
    assert.equal(await actionDigest(r), r.action_digest);
    assert.equal(await filedAs(req, r), true);
    assert.equal(await filedAs({ ...req, title: "Read the README" }, r), false, "another filing's record");
    assert.equal(await filedAs({ ...req, options: [{ id: "once", label: "Allow once", effect: "allow" }] }, r), false);
    const decided = await decide(s, r, "allow");
    assert.equal(await actionDigest(decided), r.action_digest, "a decision does not move the digest");
  });

  it("repeats a filing under the same Idempotency-Key", async () => {
    const a = await s.agent.file(req, { idempotencyKey: "same-key" });
    const b = await s.agent.file(req, { idempotencyKey: "same-key" });
    assert.equal(a.id, b.id);
    await assert.rejects(s.agent.file({ ...req, title: "other" }, { idempotencyKey: "same-key" }), { code: "idempotency_key_reused" });
  });

  it("answers an allow with the operator's note", async () => {
    const f = filings();
    const client = new Gatehouse({ url: s.url, token: s.agentToken });
    const asked = client.ask(req, { timeoutMs: 60_000, onFiled: f.onFiled });
    await decide(s, await f.next(), "allow", "go ahead");
    const o = await withGuard(asked, "no outcome");
    assert.ok(o.decided);
    assert.equal(o.effect, "allow");
    assert.equal(o.note, "go ahead");
  });

  it("answers a deny with the operator's note", async () => {
    const f = filings();
    const asked = s.agent.ask(req, { timeoutMs: 60_000, onFiled: f.onFiled });
    await decide(s, await f.next(), "deny", "not on a Friday");
    const o = await withGuard(asked, "no outcome");
    assert.ok(o.decided && o.effect === "deny" && o.note === "not on a Friday");
  });

  it("times out without a decision and withdraws the request", async () => {
    const f = filings();
    const o = await withGuard(s.agent.ask(req, { timeoutMs: 1_500, onFiled: f.onFiled }), "no outcome");
    assert.deepEqual([o.decided, !o.decided && o.reason], [false, "timeout"]);
    const r = await s.operator.get((await f.next()).id);
    assert.equal(r.status, "cancelled");
  });

  it("stops waiting when aborted, and withdraws the request", async () => {
    const f = filings();
    const ac = new AbortController();
    const asked = s.agent.ask(req, { timeoutMs: 60_000, signal: ac.signal, onFiled: f.onFiled });
    const filed = await f.next();
    ac.abort();
    const o = await withGuard(asked, "the abort did not end the wait");
    assert.deepEqual([o.decided, !o.decided && o.reason], [false, "aborted"]);
    assert.equal((await s.operator.get(filed.id)).status, "cancelled");
  });

  it("rejects a wait when its signal aborts", async () => {
    const r = await s.agent.file(req);
    const ac = new AbortController();
    const waiting = s.agent.wait(r.id, { timeoutSeconds: 60, signal: ac.signal });
    ac.abort();
    await assert.rejects(withGuard(waiting, "the abort did not end the wait"), { name: "AbortError" });
  });

  it("answers no decision when the server is unreachable", async () => {
    const client = new Gatehouse({ url: "http://127.0.0.1:1", token: s.agentToken });
    const o = await withGuard(client.ask(req, { timeoutMs: 5_000 }), "no outcome");
    assert.deepEqual([o.decided, !o.decided && o.reason], [false, "unreachable"]);
  });
});
