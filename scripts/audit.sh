#!/usr/bin/env bash
# npm audit of the production dependencies: fails on any high or critical finding. Where the
# registry's advisory endpoint cannot be reached (some networks let only GET through to the
# registry; the audit is a POST) it says so loudly and does not fail: nothing was audited.
set -uo pipefail
cd "$(dirname "$0")/.."
report=$(npm audit --omit=dev --json 2>/dev/null)
echo "$report" | node -e '
let text = "";
process.stdin.on("data", (chunk) => (text += chunk)).on("end", () => {
  let report;
  try { report = JSON.parse(text); } catch { console.error("npm audit: no report (" + text.slice(0, 200) + ")"); process.exit(1); }
  if (!report.metadata) {
    console.warn(`npm audit: WARNING, the advisory endpoint did not answer (${report.message ?? "no report"}); dependencies NOT audited`);
    process.exit(0);
  }
  const counts = report.metadata.vulnerabilities;
  console.log(`npm audit (production): ${JSON.stringify(counts)}`);
  const serious = Object.values(report.vulnerabilities ?? {}).filter((v) => v.severity === "high" || v.severity === "critical");
  for (const v of serious) console.error(`  ${v.severity}: ${v.name} ${v.range}`);
  process.exit(serious.length > 0 ? 1 : 0);
});'
