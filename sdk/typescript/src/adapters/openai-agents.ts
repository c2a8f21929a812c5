// OpenAI Agents SDK: each tool call a run interrupts for (needsApproval) is
// decided by the operator through Gatehouse, then approved or rejected on the
// run's state.

import type { RunState, RunToolApprovalItem } from "@openai/agents";
import { allowOnce, clientOf, deny, denyMessage, describeCall, riskOf, type AdapterOptions } from "./common.js";

/** The part of a run result the adapter reads: its interruptions and its state. */
export interface Interrupted {
  interruptions: RunToolApprovalItem[];
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  state: RunState<any, any>;
}

/** parseArguments is a function call's arguments as the model sent them (JSON), or the raw text. */
function parseArguments(args: string | undefined): unknown {
  if (args === undefined) return {};
  try {
    return JSON.parse(args);
  } catch {
    return args;
  }
}

/**
 * decideInterruptions asks the operator about every interruption of result
 * (one request each, in parallel) and answers each on result.state: "Allow
 * once" approves that call only; "Deny" rejects it, and the operator's note is
 * the rejection text the model reads. No decision rejects it too. Run the agent
 * again with result.state to go on.
 */
export async function decideInterruptions(result: Interrupted, opts: AdapterOptions & { signal?: AbortSignal } = {}): Promise<void> {
  const gatehouse = clientOf(opts);
  await Promise.all(
    result.interruptions.map(async (item) => {
      const tool = item.name ?? item.rawItem.type;
      const input = parseArguments(item.arguments);
      const call = describeCall(tool, input);
      const raw = item.rawItem as { callId?: string; id?: string };
      const outcome = await gatehouse.ask(
        {
          kind: "permission",
          title: call.title,
          summary: `Agent ${item.agent.name} asks to call ${tool}.`,
          detail: call.detail || undefined,
          tool,
          command: call.command,
          risk: riskOf(opts, tool, input),
          options: [allowOnce, deny],
          source_ref: { ...opts.sourceRef, ...((raw.callId ?? raw.id) ? { tool_call: (raw.callId ?? raw.id)! } : {}) },
        },
        { timeoutMs: opts.timeoutMs, signal: opts.signal, onFiled: opts.onFiled },
      );
      if (outcome.decided && outcome.effect === "allow") result.state.approve(item);
      else result.state.reject(item, { message: denyMessage(outcome) });
    }),
  );
}

/**
 * runWithGatehouse runs an agent to the end: run(input) once, then, while the
 * run stops on approvals, decides them (decideInterruptions) and runs again
 * with its state. run is the caller's call of the SDK, e.g.
 * `(input) => run(agent, input)`.
 */
export async function runWithGatehouse<R extends Interrupted, I>(
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  run: (input: I | RunState<any, any>) => Promise<R>,
  input: I,
  opts: AdapterOptions & { signal?: AbortSignal } = {},
): Promise<R> {
  let result = await run(input);
  while (result.interruptions?.length) {
    await decideInterruptions(result, opts);
    result = await run(result.state);
  }
  return result;
}
