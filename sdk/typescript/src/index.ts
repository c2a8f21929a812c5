export { Gatehouse, GatehouseError, decidedOutcome, filedAs } from "./client.js";
export type { AskOptions, CallOptions, ClientOptions, NoDecisionReason, Outcome } from "./client.js";
export { actionDigest, canonicalJSON } from "./digest.js";
export type * from "./types.js";
export type { components, operations, paths } from "./openapi.js";
