// Regenerates the flag table in README.md from the option groups of pkg/apiserver/options
// (FLAGS). Run after adding or changing a flag:
//   npm run build && node dist/hack/flags-table.js
// `--check` only reports whether the README is current (exit 1 when not).

import { readFileSync, writeFileSync } from 'node:fs';

import { withFlagsTable } from '../pkg/apiserver/options/flags-table.js';

const readmePath = 'README.md';
const readme = readFileSync(readmePath, 'utf8');
const updated = withFlagsTable(readme);
if (process.argv.includes('--check')) {
  if (updated !== readme) {
    process.stderr.write(`${readmePath}: the flag table is out of date; run node dist/hack/flags-table.js\n`);
    process.exit(1);
  }
} else if (updated !== readme) {
  writeFileSync(readmePath, updated);
  process.stdout.write(`${readmePath}: flag table updated\n`);
} else {
  process.stdout.write(`${readmePath}: flag table already current\n`);
}
