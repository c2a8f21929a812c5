// Vercel AI SDK: each tool-approval-request a generation stops on (a tool with
// needsApproval) is decided by the operator through Gatehouse and answered
// with a tool-approval-response.

import type { AssistantModelMessage, ContentPart, ModelMessage, ToolModelMessage, ToolSet } from "ai";
import { allowOnce, clientOf, deny, denyMessage, describeCall, riskOf, type AdapterOptions } from "./common.js";

type Approval = Extract<ContentPart<ToolSet>, { type: "tool-approval-request" }>;

/**
 * approvalResponses asks the operator about every tool-approval-request in
 * content (a generateText result's content; one request each, in parallel)
 * and answers a tool message to append after the result's response messages:
 * "Allow once" approves that call, "Deny" denies it with the operator's note
 * as the reason the model reads. No decision denies it too. Undefined when
 * content asks for no approval.
 */
export async function approvalResponses(
  content: ReadonlyArray<ContentPart<ToolSet>>,
  opts: AdapterOptions & { signal?: AbortSignal } = {},
): Promise<ToolModelMessage | undefined> {
  const requests = content.filter((p): p is Approval => p.type === "tool-approval-request");
  if (requests.length === 0) return undefined;
  const gatehouse = clientOf(opts);
  const parts = await Promise.all(
    requests.map(async (p) => {
      const { toolName, input, toolCallId } = p.toolCall;
      const call = describeCall(toolName, input);
      const outcome = await gatehouse.ask(
        {
          kind: "permission",
          title: call.title,
          detail: call.detail || undefined,
          tool: toolName,
          command: call.command,
          risk: riskOf(opts, toolName, input),
          options: [allowOnce, deny],
          source_ref: { ...opts.sourceRef, tool_call: toolCallId },
        },
        { timeoutMs: opts.timeoutMs, signal: opts.signal, onFiled: opts.onFiled },
      );
      const approved = outcome.decided && outcome.effect === "allow";
      return approved
        ? { type: "tool-approval-response" as const, approvalId: p.approvalId, approved: true }
        : { type: "tool-approval-response" as const, approvalId: p.approvalId, approved: false, reason: denyMessage(outcome) };
    }),
  );
  return { role: "tool", content: parts };
}

/**
 * generateWithGatehouse generates to the end: generate(messages) once, then,
 * while the result stops on approvals, appends its response messages and the
 * operator's answers and generates again. generate is the caller's call, e.g.
 * `(messages) => generateText({ model, tools, messages })`.
 */
export async function generateWithGatehouse<R extends { content: ReadonlyArray<ContentPart<ToolSet>>; response: { messages: Array<AssistantModelMessage | ToolModelMessage> } }>(
  generate: (messages: ModelMessage[]) => Promise<R>,
  messages: ModelMessage[],
  opts: AdapterOptions & { signal?: AbortSignal } = {},
): Promise<R> {
  let history = [...messages];
  let result = await generate(history);
  for (;;) {
    const answers = await approvalResponses(result.content, opts);
    if (!answers) return result;
    history = [...history, ...result.response.messages, answers];
    result = await generate(history);
  }
}
