// Claude Agent SDK: a canUseTool that asks the operator through Gatehouse.

import type { CanUseTool, PermissionResult } from "@anthropic-ai/claude-agent-sdk";
import { allowOnce, clientOf, deny, denyMessage, describeCall, oneLine, riskOf, type AdapterOptions } from "./common.js";

/**
 * canUseTool answers each of Claude Code's permission prompts with the
 * operator's decision: "Allow once" runs the call with its input unchanged,
 * "Deny" refuses it and tells the model the operator's note. No decision (a
 * timeout, an abort, an unreachable server, a decision made on something
 * else) refuses it too.
 */
export function canUseTool(opts: AdapterOptions = {}): CanUseTool {
  const gatehouse = clientOf(opts);
  return async (toolName, input, ctx): Promise<PermissionResult> => {
    const call = describeCall(toolName, input);
    const why = [ctx.title, ctx.description, ctx.decisionReason].filter((s): s is string => !!s);
    const outcome = await gatehouse.ask(
      {
        kind: "permission",
        title: call.title,
        summary: why.length ? oneLine(why.join(" — "), 2000) : undefined,
        detail: call.detail || undefined,
        tool: toolName,
        command: call.command,
        risk: riskOf(opts, toolName, input),
        options: [allowOnce, deny],
        source_ref: { ...opts.sourceRef, tool_use_id: ctx.toolUseID },
      },
      { timeoutMs: opts.timeoutMs, signal: ctx.signal, onFiled: opts.onFiled },
    );
    if (outcome.decided && outcome.effect === "allow") {
      return { behavior: "allow", updatedInput: input, toolUseID: ctx.toolUseID };
    }
    return { behavior: "deny", message: denyMessage(outcome), toolUseID: ctx.toolUseID };
  };
}
