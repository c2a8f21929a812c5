// docs/sdk.md's examples are type-checked against the package as built and
// the frameworks as installed, so the page cannot drift from either.

import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { describe, it } from "node:test";

const root = resolve(import.meta.dirname, "..");

describe("docs/sdk.md", () => {
  it("has examples that type-check", () => {
    const page = readFileSync(join(root, "..", "..", "docs", "sdk.md"), "utf8");
    const blocks = [...page.matchAll(/```ts\n([\s\S]*?)```/g)].map((m) => m[1]!);
    assert.ok(blocks.length >= 6, `only ${blocks.length} ts examples`);
    const dir = join(root, ".docs-check");
    rmSync(dir, { recursive: true, force: true });
    mkdirSync(dir);
    try {
      blocks.forEach((b, i) => writeFileSync(join(dir, `example${i}.ts`), b + "\nexport {};\n"));
      writeFileSync(
        join(dir, "tsconfig.json"),
        JSON.stringify({ extends: "../tsconfig.json", compilerOptions: { noEmit: true, rootDir: ".", types: ["node"] }, include: ["*.ts"] }),
      );
      try {
        execFileSync(process.execPath, [join(root, "node_modules", "typescript", "bin", "tsc"), "-p", join(dir, "tsconfig.json")], { encoding: "utf8" });
      } catch (err) {
        assert.fail(`tsc on the examples:\n${(err as { stdout?: string }).stdout}`);
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
