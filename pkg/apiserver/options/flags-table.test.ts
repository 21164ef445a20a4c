import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';

import { FLAGS, usage } from './flags.js';
import { flagsTable, readmeFlagsTable } from './flags-table.js';

// Tests run from the repository root (hack/test.mjs, and by hand as documented).
const readme = readFileSync('README.md', 'utf8');

test("README's flag table is the one generated from FLAGS (regenerate: node dist/hack/flags-table.js)", () => {
  const documented = readmeFlagsTable(readme);
  assert.ok(documented !== undefined, 'README.md has the flags:begin/flags:end markers');
  assert.equal(documented, flagsTable());
});

test('the table and --help list every flag the parser knows, once', () => {
  const table = flagsTable();
  const help = usage();
  for (const f of FLAGS) {
    assert.equal(table.split(`| \`--${f.name}\` |`).length - 1, 1, `--${f.name} in the table once`);
    assert.match(help, new RegExp(`\\n  --${f.name} `), `--${f.name} in --help`);
  }
  assert.equal(new Set(FLAGS.map((f) => f.name)).size, FLAGS.length, 'flag names are unique');
});
