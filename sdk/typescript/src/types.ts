// Names for the wire types, all generated from the server's OpenAPI document
// (src/openapi.ts; npm run check-types fails when it drifts).
import type { components } from "./openapi.js";

export type Schemas = components["schemas"];
export type Request = Schemas["Request"];
export type NewRequest = Schemas["NewRequest"];
export type Option = Schemas["Option"];
export type Effect = Schemas["Effect"];
export type Kind = Schemas["Kind"];
export type Risk = Schemas["Risk"];
export type Status = Schemas["Status"];
export type Wait = Schemas["Wait"];
export type Decide = Schemas["Decide"];
export type ErrorBody = Schemas["ErrorBody"];
export type ErrorCode = Schemas["ErrorCode"];
