// The layers of docs/design.md are a lint rule: these tests run ESLint with the
// repository's own eslint.config.js on imports a change might add, so `npm test`
// fails if the rule stops biting, and they hold the docs' list and the config's
// list to each other.

import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import { fileURLToPath, pathToFileURL } from 'node:url';

import { ESLint } from 'eslint';

// Tests run from dist/hack/: the repository is two folders up.
const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const RULE = 'layers/import-layers';

const eslint = new ESLint({ cwd: ROOT });

/** The layer rule's messages for `code` as if it were the file at `filePath` (from the repository's root). */
async function layerErrors(filePath: string, code: string): Promise<string[]> {
  const [result] = await eslint.lintText(code, { filePath });
  assert.ok(result, 'ESLint returns a result per text');
  return result.messages.filter((m) => m.ruleId === RULE).map((m) => m.message);
}

/** Lints `code` as `filePath` and expects the layer rule's one message: `expected`, or matching it. */
async function assertRefused(filePath: string, code: string, expected: string | RegExp): Promise<void> {
  const errors = await layerErrors(filePath, code);
  assert.equal(errors.length, 1, `${filePath}: ${errors.join('; ')}`);
  if (typeof expected === 'string') assert.equal(errors[0], expected);
  else assert.match(errors[0] ?? '', expected);
}

describe('the layer rule (eslint.config.js, docs/design.md "The house")', () => {
  it('refuses an upward import from the types layer into the registry', async () => {
    await assertRefused(
      'pkg/apis/management/v1/upward.ts',
      "import type { RESTStorage } from '../../../registry/rest/interfaces.js';\nexport type Upward = RESTStorage;\n",
      'pkg/apis/management imports pkg/registry/rest, which is on a layer above it: imports point down the layers of docs/design.md ("The house"); move what both need down instead',
    );
  });

  it('refuses a lower layer reaching up into the HTTP layer, as pkg/identity once did for its Logger', async () => {
    await assertRefused(
      'pkg/identity/upward.ts',
      "import type { ApiServerConfig } from '../apiserver/config.js';\nexport type Upward = ApiServerConfig;\n",
      /^pkg\/identity imports pkg\/apiserver, which is on a layer above it/,
    );
  });

  it('refuses an import between siblings on one layer (two API groups)', async () => {
    await assertRefused(
      'pkg/apis/authentication/v1/sibling.ts',
      "import type { SubjectAccessReview } from '../../authorization/v1/types.js';\nexport type Sibling = SubjectAccessReview;\n",
      /pkg\/apis\/authentication imports pkg\/apis\/authorization, which is on the same layer/,
    );
  });

  it('keeps the backends to the assembly and concrete kinds out of the generic registry', async () => {
    await assertRefused(
      'pkg/registry/generic/backend.ts',
      "import { SqliteKV } from '../../storage/sqlite/index.js';\nexport const kv = SqliteKV;\n",
      'pkg/registry/generic imports pkg/storage/sqlite, which only pkg/server may import (docs/design.md, "The house")',
    );
    await assertRefused(
      'pkg/registry/generic/kind.ts',
      "import type { Team } from '../../apis/management/v1/team.js';\nexport type Kind = Team;\n",
      'pkg/registry/generic imports pkg/apis/management, which it may not import (docs/design.md, "The house")',
    );
    // The assembly may: that is its job.
    assert.deepEqual(
      await layerErrors(
        'pkg/server/assembly.ts',
        "import { SqliteKV } from '../storage/sqlite/index.js';\nexport const kv = SqliteKV;\n",
      ),
      [],
    );
  });

  it('lets nothing import cmd/, not even a test', async () => {
    for (const filePath of [
      'pkg/cli/main-reuse.ts',
      'pkg/cli/main-reuse.test.ts',
      'e2e/main-reuse.test.ts',
    ]) {
      const up = '../'.repeat(filePath.split('/').length - 1);
      await assertRefused(filePath, `import '${up}cmd/platform/main.js';\n`, /nothing imports cmd\//);
    }
  });

  it('asks for a place in the layers for a new folder', async () => {
    const errors = await layerErrors('pkg/newfolder/thing.ts', 'export const thing = 1;\n');
    assert.deepEqual(errors, [
      'pkg/newfolder is in no layer: add it to the layers in eslint.config.js and docs/design.md ("The house")',
    ]);
  });

  it('allows downward imports, and tests that assemble real parts', async () => {
    assert.deepEqual(
      await layerErrors(
        'pkg/apiserver/downward.ts',
        "import { Store } from '../registry/generic/store.js';\nimport type { Logger } from '../util/log/index.js';\nexport type Down = [Store, Logger];\n",
      ),
      [],
    );
    assert.deepEqual(
      await layerErrors(
        'pkg/storage/assembled.test.ts',
        "import { ServerOptions } from '../apiserver/options/index.js';\nexport const o = ServerOptions;\n",
      ),
      [],
    );
  });

  it('has the layers of docs/design.md, line for line', async () => {
    const design = readFileSync(`${ROOT}docs/design.md`, 'utf8');
    const block = /```layers\n([\s\S]*?)```/.exec(design)?.[1];
    assert.ok(block, 'docs/design.md has a ```layers block');
    const documented = block
      .trim()
      .split('\n')
      .map((line) => line.trim().split(/\s+/));
    const config = (await import(pathToFileURL(`${ROOT}eslint.config.js`).href)) as {
      LAYERS: { layers: string[][] };
    };
    assert.deepEqual(documented, config.LAYERS.layers);
  });
});
