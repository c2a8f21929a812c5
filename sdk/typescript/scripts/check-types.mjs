// Regenerates src/openapi.ts from openapi.json (the server's document, kept
// equal to GET /openapi.json by the Go test TestOpenAPISDKCopy) and fails when
// the committed file differs: the SDK's types never drift from the API.
import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";

const root = resolve(import.meta.dirname, "..");
const dir = mkdtempSync(join(tmpdir(), "gatehouse-types-"));
try {
  const out = join(dir, "openapi.ts");
  execFileSync(process.execPath, [join(root, "node_modules", "openapi-typescript", "bin", "cli.js"), join(root, "openapi.json"), "-o", out], { stdio: ["ignore", "ignore", "inherit"] });
  if (readFileSync(out, "utf8") !== readFileSync(join(root, "src", "openapi.ts"), "utf8")) {
    console.error("src/openapi.ts is stale: run `npm run generate-types` in sdk/typescript and commit it");
    process.exit(1);
  }
  console.log("src/openapi.ts matches openapi.json");
} finally {
  rmSync(dir, { recursive: true, force: true });
}
