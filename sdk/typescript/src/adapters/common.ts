// What every adapter shares: the client, how a tool call reads on the
// operator's card, and the words the model gets when the answer is not an allow.

import { Gatehouse, type Outcome } from "../client.js";
import { canonicalJSON } from "../digest.js";
import type { Option, Request, Risk } from "../types.js";

export interface AdapterOptions {
  /** A client; default one built from url and token (or GATEHOUSE_URL and GATEHOUSE_TOKEN). */
  client?: Gatehouse;
  url?: string;
  /** An agent or runtime token. */
  token?: string;
  /** How long to wait for the operator, in milliseconds (default 10 minutes); then the call is denied. */
  timeoutMs?: number;
  /** The risk shown on the card, for every call or per call. */
  risk?: Risk | ((tool: string, input: unknown) => Risk | undefined);
  /** Extra references kept with each request (a session, a cwd, …). */
  sourceRef?: Record<string, string>;
  /** Called with each request once it is filed. */
  onFiled?: (request: Request) => void;
}

export function clientOf(o: AdapterOptions): Gatehouse {
  return o.client ?? new Gatehouse({ url: o.url, token: o.token });
}

export function riskOf(o: AdapterOptions, tool: string, input: unknown): Risk | undefined {
  return typeof o.risk === "function" ? o.risk(tool, input) : o.risk;
}

export const allowOnce: Option = { id: "once", label: "Allow once", effect: "allow" };
export const deny: Option = { id: "deny", label: "Deny", effect: "deny" };

/** oneLine is s with control characters and runs of space made one space, at most max bytes of UTF-8. */
export function oneLine(s: string, max: number): string {
  // eslint-disable-next-line no-control-regex
  let out = s.replace(/[\u0000-\u001f\u007f-\u009f\u200e\u200f\u202a-\u202e\u2066-\u2069\s]+/g, " ").trim();
  const enc = new TextEncoder();
  if (enc.encode(out).length <= max) return out;
  while (enc.encode(out + "…").length > max) out = Array.from(out).slice(0, -1).join("");
  return out + "…";
}

/** clip is s cut to at most max bytes of UTF-8. */
export function clip(s: string, max: number): string {
  const enc = new TextEncoder();
  if (enc.encode(s).length <= max) return s;
  let out = s.slice(0, max);
  while (enc.encode(out + "…").length > max) out = Array.from(out).slice(0, -1).join("");
  return out + "…";
}

export interface Call {
  /** What the tool acts on: a command line, a path, else the arguments as canonical JSON. */
  command: string;
  title: string;
  /** The whole input, when the command does not already say all of it. */
  detail: string;
}

/** describeCall is how a tool call reads on the card: tool, what it acts on, the whole input. */
export function describeCall(tool: string, input: unknown): Call {
  const rec = input && typeof input === "object" ? (input as Record<string, unknown>) : undefined;
  const whole = canonicalJSON(input ?? null);
  let command = whole;
  for (const k of ["command", "cmd", "file_path", "path", "url", "query"]) {
    if (typeof rec?.[k] === "string" && Object.keys(rec).length === 1) {
      command = rec[k] as string;
      break;
    }
  }
  if (command === whole && typeof rec?.command === "string") command = rec.command;
  const detail = command === whole || Object.keys(rec ?? {}).length <= 1 ? "" : clip(JSON.stringify(input, null, 2), 32 * 1024);
  return { command: clip(command, 16 * 1024), title: oneLine(`${tool}: ${command}`, 200), detail };
}

/** denyMessage is what the model is told when the call does not run: the operator's note, or why there was no decision. */
export function denyMessage(o: Outcome): string {
  if (o.decided) {
    return o.note ? `The operator denied this tool call: ${o.note}` : "The operator denied this tool call.";
  }
  const why: Record<string, string> = {
    timeout: "no decision came in time",
    aborted: "the wait was stopped",
    unreachable: "Gatehouse could not be reached",
    not_filed_as_sent: "Gatehouse did not record the call as asked",
    mismatch: "the decision was not made on this call",
    expired: "the request expired",
    cancelled: "the request was withdrawn",
    dismissed: "the operator dismissed the request",
  };
  return `The tool call was not run: ${why[o.reason] ?? o.reason}.`;
}

/** parseObject is an operator's edited arguments: a JSON object, else undefined. */
export function parseObject(s: string | null): Record<string, unknown> | undefined {
  if (!s) return undefined;
  try {
    const v: unknown = JSON.parse(s);
    return v && typeof v === "object" && !Array.isArray(v) ? (v as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}
