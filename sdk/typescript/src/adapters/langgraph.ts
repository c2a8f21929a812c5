// LangGraph JS: a graph that calls interrupt() with the Agent Inbox's
// HumanInterrupt is answered with the operator's HumanResponse, through
// Gatehouse.

import type { HumanInterrupt, HumanResponse } from "@langchain/langgraph/prebuilt";
import type { Option } from "../types.js";
import { clientOf, clip, denyMessage, describeCall, parseObject, riskOf, type AdapterOptions } from "./common.js";

// One option per answer the interrupt's config allows, each meaning what the
// graph will do with it.
const accept: Option = { id: "accept", label: "Accept", effect: "allow" };
const edit: Option = { id: "edit", label: "Accept with my edited arguments (JSON in the answer)", effect: "allow" };
const respond: Option = { id: "respond", label: "Answer instead of running it" };
const ignore: Option = { id: "ignore", label: "Ignore", effect: "deny" };

/**
 * answerInterrupt asks the operator about one HumanInterrupt and answers its
 * HumanResponse: accept; edit, with the operator's answer (a JSON object) as
 * the new arguments; response, with the operator's answer as the text; or, on
 * a deny, a response carrying the operator's note when the interrupt allows a
 * response, else ignore. No decision (a timeout, an abort, an unreachable
 * server, a decision made on something else) is a response saying so when
 * allowed, else ignore: never accept or edit.
 */
export async function answerInterrupt(hi: HumanInterrupt, opts: AdapterOptions & { signal?: AbortSignal } = {}): Promise<HumanResponse> {
  const { action, args } = hi.action_request;
  const c = hi.config;
  const options = [c.allow_accept && accept, c.allow_edit && edit, c.allow_respond && respond, ignore].filter((o): o is Option => !!o);
  const call = describeCall(action, args);
  const outcome = await clientOf(opts).ask(
    {
      kind: "permission",
      title: call.title,
      summary: hi.description ? clip(hi.description, 2000) : undefined,
      detail: call.detail || undefined,
      tool: action,
      command: call.command,
      risk: riskOf(opts, action, args),
      options,
      allow_answer: c.allow_edit || c.allow_respond,
      source_ref: { ...opts.sourceRef },
    },
    { timeoutMs: opts.timeoutMs, signal: opts.signal, onFiled: opts.onFiled },
  );
  const refuse = (text: string): HumanResponse => (c.allow_respond ? { type: "response", args: text } : { type: "ignore", args: null });
  if (!outcome.decided) return refuse(denyMessage(outcome));
  switch (outcome.option.id) {
    case "accept":
      return { type: "accept", args: null };
    case "edit": {
      const edited = parseObject(outcome.answer);
      if (!edited) return refuse("The tool call was not run: the operator's edit was not a JSON object.");
      return { type: "edit", args: { action, args: edited } };
    }
    case "respond":
      return outcome.answer ? { type: "response", args: outcome.answer } : refuse(denyMessage(outcome));
    default:
      return outcome.note ? refuse(denyMessage(outcome)) : { type: "ignore", args: null };
  }
}

/** An interrupt as a graph's result carries it (result.__interrupt__). */
export interface Interrupt {
  id?: string;
  value?: unknown;
}

/**
 * resumeValue answers a graph's interrupts (result.__interrupt__), each a
 * HumanInterrupt or a list of them (the Agent Inbox sends a list of one):
 * the value to resume with, new Command({ resume }) — for one interrupt its
 * answer, for several a map from interrupt id to answer.
 */
export async function resumeValue(interrupts: Interrupt[], opts: AdapterOptions & { signal?: AbortSignal } = {}): Promise<unknown> {
  const answer = (v: unknown) =>
    Array.isArray(v) ? Promise.all(v.map((hi) => answerInterrupt(hi as HumanInterrupt, opts))) : answerInterrupt(v as HumanInterrupt, opts);
  if (interrupts.length === 1) return answer(interrupts[0]!.value);
  const out: Record<string, unknown> = {};
  await Promise.all(interrupts.map(async (i) => (out[i.id!] = await answer(i.value))));
  return out;
}

/**
 * invokeWithGatehouse runs a graph to the end: start() once, then, while the
 * result carries interrupts, answers them and resumes. resume is the caller's
 * `(resume) => graph.invoke(new Command({ resume }), config)`.
 */
export async function invokeWithGatehouse<S extends object>(
  start: () => Promise<S>,
  resume: (value: unknown) => Promise<S>,
  opts: AdapterOptions & { signal?: AbortSignal } = {},
): Promise<S> {
  let result = await start();
  for (;;) {
    const interrupts = (result as { __interrupt__?: Interrupt[] }).__interrupt__;
    if (!interrupts?.length) return result;
    result = await resume(await resumeValue(interrupts, opts));
  }
}
