// Claude Agent SDK: a canUseTool that asks the operator through Gatehouse.

import type { CanUseTool, PermissionResult } from "@anthropic-ai/claude-agent-sdk";
import type { Option } from "../types.js";
import { allowOnce, clientOf, deny, denyMessage, describeCall, oneLine, parseObject, riskOf, type AdapterOptions } from "./common.js";

const edit: Option = { id: "edit", label: "Allow with my edited input (JSON in the answer)", effect: "allow" };

export interface ClaudeOptions extends AdapterOptions {
  /** Also offer "Allow with my edited input": the operator's answer, a JSON object, is the input the tool runs with. */
  offerEdit?: boolean;
}

/**
 * canUseTool answers each of Claude Code's permission prompts with the
 * operator's decision: "Allow once" runs the call with its input unchanged,
 * "Deny" refuses it and tells the model the operator's note. No decision (a
 * timeout, an abort, an unreachable server, a decision made on something
 * else) refuses it too. With offerEdit, the operator may also answer the tool's
 * input as a JSON object and allow that instead (an answer that is not one
 * refuses the call).
 */
export function canUseTool(opts: ClaudeOptions = {}): CanUseTool {
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
        options: opts.offerEdit ? [allowOnce, edit, deny] : [allowOnce, deny],
        allow_answer: opts.offerEdit || undefined,
        source_ref: { ...opts.sourceRef, tool_use_id: ctx.toolUseID },
      },
      { timeoutMs: opts.timeoutMs, signal: ctx.signal, onFiled: opts.onFiled },
    );
    if (outcome.decided && outcome.option.id === "edit") {
      const edited = parseObject(outcome.answer);
      if (edited) return { behavior: "allow", updatedInput: edited, toolUseID: ctx.toolUseID };
      return { behavior: "deny", message: "The tool call was not run: the operator's edit was not a JSON object.", toolUseID: ctx.toolUseID };
    }
    if (outcome.decided && outcome.effect === "allow") {
      return { behavior: "allow", updatedInput: input, toolUseID: ctx.toolUseID };
    }
    return { behavior: "deny", message: denyMessage(outcome), toolUseID: ctx.toolUseID };
  };
}
