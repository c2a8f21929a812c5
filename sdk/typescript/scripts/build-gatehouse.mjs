// Builds the gatehouse binary the tests serve, from this tree, unless
// GATEHOUSE_BIN names one already built.
import { execFileSync } from "node:child_process";
import { resolve } from "node:path";

if (!process.env.GATEHOUSE_BIN) {
  const repo = resolve(import.meta.dirname, "..", "..", "..");
  execFileSync("go", ["build", "-o", resolve(import.meta.dirname, "..", ".gatehouse", "gatehouse"), "./cmd/gatehouse"], { cwd: repo, stdio: "inherit" });
}
