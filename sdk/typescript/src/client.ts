// The Gatehouse client every adapter uses: file a request, wait for its
// decision (long-poll, abortable), decide, cancel — and act only on a decision
// made on exactly what was filed.

import { actionDigest } from "./digest.js";
import type { Decide, ErrorBody, NewRequest, Option, Request, Wait } from "./types.js";

/** GatehouseError is a non-2xx answer: the server's error code, status and words. */
export class GatehouseError extends Error {
  readonly status: number;
  readonly code: string;
  readonly detail: string;
  /** On a conflict, the record as it stands. */
  readonly request?: Request | null;
  constructor(status: number, body: Partial<ErrorBody> | undefined, fallback: string) {
    const code = body?.error ?? "http_" + status;
    const detail = body?.detail ?? fallback;
    super(`gatehouse: ${status} ${code}: ${detail}`);
    this.name = "GatehouseError";
    this.status = status;
    this.code = code;
    this.detail = detail;
    this.request = body?.request;
  }
}

export interface ClientOptions {
  /** The server's base URL; default GATEHOUSE_URL. */
  url?: string;
  /** An agent or runtime token (an operator token to decide); default GATEHOUSE_TOKEN. */
  token?: string;
  /** The fetch to use (tests, proxies); default globalThis.fetch. */
  fetch?: typeof fetch;
}

export interface CallOptions {
  signal?: AbortSignal;
}

/** Why a request ended without a decision the filer may act on. */
export type NoDecisionReason =
  | "timeout" // no decision within the time allowed
  | "aborted" // the caller's AbortSignal fired
  | "unreachable" // the server could not be reached or answered an error
  | "not_filed_as_sent" // the filing answered a record other than the one sent
  | "mismatch" // decided, but on another request or another version than the one filed
  | "expired"
  | "cancelled"
  | "dismissed";

/** Outcome is how a request ended, as far as the filer may act on it. */
export type Outcome =
  | {
      decided: true;
      /** The option chosen, as filed. */
      option: Option;
      /** allow, deny, or undefined for a plain answer. */
      effect: Option["effect"];
      /** The operator's guidance to the agent, if any. */
      note: string | null;
      /** The operator's free-text answer, if the request allowed one. */
      answer: string | null;
      request: Request;
    }
  | { decided: false; reason: NoDecisionReason; detail: string; request?: Request };

export interface AskOptions extends CallOptions {
  /** How long to wait for a decision, in milliseconds (default 10 minutes). */
  timeoutMs?: number;
  /** Makes a retried filing answer the same record; default a fresh UUID. */
  idempotencyKey?: string;
  /** Called with the record once it is filed (to log or show its id). */
  onFiled?: (request: Request) => void;
}

const env = (name: string): string | undefined =>
  (globalThis as { process?: { env?: Record<string, string | undefined> } }).process?.env?.[name];

export class Gatehouse {
  readonly url: string;
  readonly #token: string;
  readonly #fetch: typeof fetch;

  constructor(opts: ClientOptions = {}) {
    const url = opts.url ?? env("GATEHOUSE_URL");
    const token = opts.token ?? env("GATEHOUSE_TOKEN");
    if (!url) throw new Error("gatehouse: no server URL (pass url or set GATEHOUSE_URL)");
    if (!token) throw new Error("gatehouse: no token (pass token or set GATEHOUSE_TOKEN)");
    this.url = url.replace(/\/+$/, "");
    this.#token = token;
    this.#fetch = opts.fetch ?? globalThis.fetch.bind(globalThis);
  }

  async #call<T>(method: string, path: string, body?: unknown, opts: CallOptions & { headers?: Record<string, string> } = {}): Promise<T> {
    const headers: Record<string, string> = { Authorization: `Bearer ${this.#token}`, Accept: "application/json", ...opts.headers };
    if (body !== undefined) headers["Content-Type"] = "application/json";
    const res = await this.#fetch(this.url + path, {
      method,
      headers,
      body: body === undefined ? undefined : JSON.stringify(body),
      signal: opts.signal,
    });
    const text = await res.text();
    let parsed: unknown;
    try {
      parsed = text ? JSON.parse(text) : undefined;
    } catch {
      parsed = undefined;
    }
    if (!res.ok) throw new GatehouseError(res.status, parsed as Partial<ErrorBody> | undefined, text.slice(0, 200) || res.statusText);
    return parsed as T;
  }

  /** file files a request (201, or 200 with the first record when idempotencyKey repeats). */
  file(req: NewRequest, opts: CallOptions & { idempotencyKey?: string } = {}): Promise<Request> {
    const key = opts.idempotencyKey ?? globalThis.crypto.randomUUID();
    return this.#call<Request>("POST", "/v1/requests", req, { signal: opts.signal, headers: { "Idempotency-Key": key } });
  }

  /** get answers one record. */
  get(id: string, opts: CallOptions = {}): Promise<Request> {
    return this.#call<Request>("GET", `/v1/requests/${encodeURIComponent(id)}`, undefined, opts);
  }

  /**
   * wait long-polls one request: at once when it is no longer open, else when
   * it changes, else after timeoutSeconds (1..300) with timed_out true.
   * Rejects with the signal's reason when it is aborted.
   */
  wait(id: string, opts: CallOptions & { timeoutSeconds?: number } = {}): Promise<Wait> {
    const s = Math.min(300, Math.max(1, Math.ceil(opts.timeoutSeconds ?? 60)));
    return this.#call<Wait>("GET", `/v1/requests/${encodeURIComponent(id)}/wait?timeout=${s}`, undefined, opts);
  }

  /** decide decides a request on the version the operator saw (an operator token). */
  decide(id: string, d: Decide & { version: number }, opts: CallOptions = {}): Promise<Request> {
    return this.#call<Request>("POST", `/v1/requests/${encodeURIComponent(id)}/decide`, d, opts);
  }

  /** cancel withdraws an open request the caller filed. */
  cancel(id: string, reason?: string, opts: CallOptions = {}): Promise<Request> {
    return this.#call<Request>("POST", `/v1/requests/${encodeURIComponent(id)}/cancel`, reason ? { reason } : {}, opts);
  }

  /**
   * ask files req and waits for its decision. It never throws for a transport
   * or server failure, a timeout or an abort: each of those is an outcome with
   * decided false, which no adapter reads as an allow. A decision counts only
   * when it was made on the request filed, on the version filed.
   */
  async ask(req: NewRequest, opts: AskOptions = {}): Promise<Outcome> {
    const timeoutMs = opts.timeoutMs ?? 10 * 60_000;
    const deadline = Date.now() + timeoutMs;
    const body: NewRequest = { ...req };
    // The request outlives the wait a little, so the wait's end (which
    // withdraws it) speaks first; left behind, it still expires on its own.
    if (body.expires_in == null) body.expires_in = Math.ceil(timeoutMs / 1000) + 30;
    let filed: Request;
    try {
      filed = await this.file(body, { signal: opts.signal, idempotencyKey: opts.idempotencyKey });
    } catch (err) {
      if (opts.signal?.aborted) return { decided: false, reason: "aborted", detail: "aborted before the request was filed" };
      return { decided: false, reason: "unreachable", detail: errText(err) };
    }
    if (!(await filedAs(body, filed))) {
      await this.#cancelQuietly(filed.id, "the filing answered a different record");
      return { decided: false, reason: "not_filed_as_sent", detail: "the server's record is not the request sent", request: filed };
    }
    opts.onFiled?.(filed);
    let last: Request = filed;
    let failures = 0;
    while (last.status === "open") {
      const left = deadline - Date.now();
      if (left <= 0) {
        await this.#cancelQuietly(filed.id, "no decision in time");
        return { decided: false, reason: "timeout", detail: `no decision within ${Math.round(timeoutMs / 1000)}s`, request: last };
      }
      const seconds = Math.min(300, Math.max(1, Math.floor(left / 1000)));
      // The long-poll ends by itself after `seconds`; the guard ends a call
      // that hangs past it (a stalled proxy), and the caller's signal ends it at once.
      const guard = AbortSignal.timeout(left + 5_000);
      const signal = opts.signal ? AbortSignal.any([opts.signal, guard]) : guard;
      try {
        const w = await this.wait(filed.id, { timeoutSeconds: seconds, signal });
        failures = 0;
        if (w.id !== filed.id) {
          return { decided: false, reason: "mismatch", detail: `the wait answered ${w.id}, not ${filed.id}` };
        }
        last = w as unknown as Request;
      } catch (err) {
        if (opts.signal?.aborted) {
          await this.#cancelQuietly(filed.id, "the agent stopped waiting");
          return { decided: false, reason: "aborted", detail: "the wait was aborted", request: last };
        }
        if (err instanceof GatehouseError && err.status === 429) {
          await sleep(Math.min(1000, Math.max(0, deadline - Date.now())), opts.signal);
          continue;
        }
        if (err instanceof GatehouseError || ++failures > 3) {
          return { decided: false, reason: "unreachable", detail: errText(err), request: last };
        }
        await sleep(Math.min(500 * failures, Math.max(0, deadline - Date.now())), opts.signal);
      }
    }
    return decidedOutcome(filed, last);
  }

  async #cancelQuietly(id: string, reason: string): Promise<void> {
    try {
      await this.cancel(id, reason, { signal: AbortSignal.timeout(5_000) });
    } catch {
      // Best effort: the request expires on its own.
    }
  }
}

/**
 * filedAs reports whether answered is the record req files: the server's
 * action digest of answered equals the digest computed here of what was sent
 * (the server's defaults applied, its own members taken from the answer).
 */
export async function filedAs(req: NewRequest, answered: Request): Promise<boolean> {
  if (!answered?.action_digest) return false;
  const r: Record<string, unknown> = { ...(answered as unknown as Record<string, unknown>) };
  r.kind = req.kind ?? "approval";
  r.title = req.title;
  r.summary = req.summary ?? "";
  r.detail = req.detail ?? "";
  r.options = req.options ?? [];
  r.allow_answer = req.allow_answer ?? false;
  r.default_option = req.default_option || null;
  r.source = req.source || "session";
  r.source_ref = req.source_ref ?? {};
  r.runtime_id = req.runtime_id ?? null;
  r.sealed = req.sealed ?? true;
  r.risk = req.risk ?? null;
  if (req.tool) r.tool = req.tool;
  else delete r.tool;
  if (req.command) r.command = req.command;
  else delete r.command;
  return (await actionDigest(r)) === answered.action_digest;
}

/**
 * decidedOutcome is the decision on filed as final carries it, or no decision
 * when final is another request, is not resolved, or was decided on another
 * version than the one filed (its decided_digest is not the filing's
 * action_digest) — as the Go client's DecidedOption.
 */
export function decidedOutcome(filed: Request, final: Request): Outcome {
  if (!final || final.id !== filed.id) {
    return { decided: false, reason: "mismatch", detail: "a decision on another request" };
  }
  if (final.status !== "resolved" || final.decision == null) {
    const reason = final.status === "expired" || final.status === "cancelled" || final.status === "dismissed" ? final.status : "timeout";
    return { decided: false, reason, detail: `the request ended ${final.status} without a decision`, request: final };
  }
  if (!filed.action_digest || final.decided_digest !== filed.action_digest) {
    return { decided: false, reason: "mismatch", detail: "decided on another version than the one filed", request: final };
  }
  const option = (filed.options ?? []).find((o) => o.id === final.decision);
  if (!option) return { decided: false, reason: "mismatch", detail: "the decision is not an option filed", request: final };
  return { decided: true, option, effect: option.effect, note: final.note ?? null, answer: final.answer ?? null, request: final };
}

function errText(err: unknown): string {
  if (err instanceof GatehouseError) return err.message;
  if (err instanceof Error) return `gatehouse: ${err.message}${err.cause instanceof Error ? ": " + err.cause.message : ""}`;
  return `gatehouse: ${String(err)}`;
}

function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal?.aborted || ms <= 0) return resolve();
    const t = setTimeout(done, ms);
    function done() {
      clearTimeout(t);
      signal?.removeEventListener("abort", done);
      resolve();
    }
    signal?.addEventListener("abort", done, { once: true });
  });
}
