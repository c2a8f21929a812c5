// LangChain (v1): humanInTheLoopMiddleware's interrupts (a HITLRequest of
// actionRequests and reviewConfigs) are decided by the operator through
// Gatehouse and resumed with a HITLResponse of decisions.

import type { Decision, HITLRequest, HITLResponse } from "langchain";
import type { Option } from "../types.js";
import { clientOf, clip, denyMessage, describeCall, parseObject, riskOf, type AdapterOptions } from "./common.js";
import type { Interrupt } from "./langgraph.js";

const approve: Option = { id: "approve", label: "Approve", effect: "allow" };
const edit: Option = { id: "edit", label: "Approve with my edited arguments (JSON in the answer)", effect: "allow" };
const reject: Option = { id: "reject", label: "Reject", effect: "deny" };

/**
 * hitlResponse asks the operator about each action of a HITLRequest (one
 * request each, in parallel, offering the decisions its review config allows)
 * and answers the decisions in order: approve; edit, with the operator's
 * answer (a JSON object) as the new arguments; reject, with the operator's
 * note as the message the model reads. No decision (a timeout, an abort, an
 * unreachable server, a decision made on something else) is a reject.
 */
export async function hitlResponse(req: HITLRequest, opts: AdapterOptions & { signal?: AbortSignal } = {}): Promise<HITLResponse> {
  const gatehouse = clientOf(opts);
  const decisions = await Promise.all(
    req.actionRequests.map(async (action, i): Promise<Decision> => {
      const allowed = req.reviewConfigs.find((c) => c.actionName === action.name)?.allowedDecisions ?? req.reviewConfigs[i]?.allowedDecisions ?? ["approve", "reject"];
      const options = [allowed.includes("approve") && approve, allowed.includes("edit") && edit, reject].filter((o): o is Option => !!o);
      const call = describeCall(action.name, action.args);
      const outcome = await gatehouse.ask(
        {
          kind: "permission",
          title: call.title,
          summary: action.description ? clip(action.description, 2000) : undefined,
          detail: call.detail || undefined,
          tool: action.name,
          command: call.command,
          risk: riskOf(opts, action.name, action.args),
          options,
          allow_answer: allowed.includes("edit") || undefined,
          source_ref: { ...opts.sourceRef },
        },
        { timeoutMs: opts.timeoutMs, signal: opts.signal, onFiled: opts.onFiled },
      );
      if (outcome.decided && outcome.option.id === "approve") return { type: "approve" };
      if (outcome.decided && outcome.option.id === "edit") {
        const args = parseObject(outcome.answer);
        if (args) return { type: "edit", editedAction: { name: action.name, args } };
        return { type: "reject", message: "The tool call was not run: the operator's edit was not a JSON object." };
      }
      return { type: "reject", message: denyMessage(outcome) };
    }),
  );
  return { decisions };
}

/**
 * invokeWithGatehouse runs an agent to the end: start() once, then, while the
 * result carries the middleware's interrupt, answers it and resumes. resume
 * is the caller's `(resume) => agent.invoke(new Command({ resume }), config)`.
 */
export async function invokeWithGatehouse<S extends object>(
  start: () => Promise<S>,
  resume: (value: HITLResponse) => Promise<S>,
  opts: AdapterOptions & { signal?: AbortSignal } = {},
): Promise<S> {
  let result = await start();
  for (;;) {
    const interrupts = (result as { __interrupt__?: Interrupt[] }).__interrupt__;
    if (!interrupts?.length) return result;
    // The middleware interrupts once per model turn, with every call of it.
    result = await resume(await hitlResponse(interrupts[0]!.value as HITLRequest, opts));
  }
}
