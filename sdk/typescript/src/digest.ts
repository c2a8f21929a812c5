// The action digest as the server computes it (api/action_digest.go): the hex
// SHA-256 of the RFC 8785 canonical JSON of the record as the API shows it,
// less the server-assigned members and the votes.

import type { Request } from "./types.js";

// serverAssigned mirrors api.serverAssigned: what the server writes and nobody
// files. Everything else is covered, so a member added later is covered too.
const serverAssigned = new Set([
  "id", "status", "version", "decision", "answer", "note", "created_by",
  "created_at", "updated_at", "expires_at", "resolved_at", "decided_by",
  "decided_via", "actuation", "hold", "edited_at", "action_digest", "decided_digest",
  "escalation", "grant_id",
]);

/**
 * canonicalJSON is RFC 8785 (JCS): members sorted by UTF-16 code units, no
 * white space, numbers as ECMAScript prints them, strings as JSON.stringify
 * escapes them — which is what RFC 8785 specifies for each.
 */
export function canonicalJSON(v: unknown): string {
  if (v === null || typeof v !== "object") {
    if (typeof v === "number" && !Number.isFinite(v)) throw new TypeError("canonicalJSON: not a finite number");
    return JSON.stringify(v);
  }
  if (Array.isArray(v)) return "[" + v.map((x) => canonicalJSON(x === undefined ? null : x)).join(",") + "]";
  const o = v as Record<string, unknown>;
  const keys = Object.keys(o).filter((k) => o[k] !== undefined).sort();
  return "{" + keys.map((k) => JSON.stringify(k) + ":" + canonicalJSON(o[k])).join(",") + "}";
}

/** digestInput is the record's digested part: server-assigned members and votes left out. */
export function digestInput(r: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(r)) {
    if (serverAssigned.has(k)) continue;
    if (k === "approvals" && v !== null && v !== undefined) {
      // The policy is what deciders must meet; the votes are its state.
      const a = v as { groups: unknown; required: unknown; note: unknown; escalate?: unknown[] };
      const p: Record<string, unknown> = { groups: a.groups, required: a.required, note: a.note ?? null };
      if (Array.isArray(a.escalate) && a.escalate.length > 0) p.escalate = a.escalate;
      out[k] = p;
      continue;
    }
    out[k] = v;
  }
  return out;
}

/** actionDigest is the server's action_digest of a record as the API shows it. */
export async function actionDigest(r: Request | Record<string, unknown>): Promise<string> {
  const bytes = new TextEncoder().encode(canonicalJSON(digestInput(r as Record<string, unknown>)));
  const sum = await globalThis.crypto.subtle.digest("SHA-256", bytes);
  return Array.from(new Uint8Array(sum), (b) => b.toString(16).padStart(2, "0")).join("");
}
