import assert from 'node:assert/strict';
import { readdirSync, existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { describe, it } from 'node:test';
import { fileURLToPath, pathToFileURL } from 'node:url';

import { isObject } from '../../apis/meta/types.js';
import { ACCESS_KEYS, TEAMS, USERS } from '../../identity/identity-cache.js';
import { mapValueSchema, propertySchema } from '../../apis/schema/walk.js';
import type { KindDefinition } from './kind.js';
import { MANAGEMENT_KINDS, managementKinds, resourcesWhere, sensitiveFieldsByResource } from './kinds.js';

const GROUP = 'example.dev';
const here = dirname(fileURLToPath(import.meta.url));

function isKindDefinition(value: unknown): value is KindDefinition {
  return isObject(value) && typeof value['strategy'] === 'function' && isObject(value['traits']);
}

/** The schema node at a dotted path (`spec.data`), or undefined when the schema has no such field. */
function schemaAt(schema: Record<string, unknown>, path: string): Record<string, unknown> | undefined {
  let node: Record<string, unknown> | undefined = schema;
  for (const step of path.split('.')) node = node && propertySchema(node, step);
  return node;
}

describe('the list of kinds', () => {
  it('holds every kind a folder defines: a kind.ts left out of the list is served by nothing', async () => {
    const defined: KindDefinition[] = [];
    for (const entry of readdirSync(here, { withFileTypes: true })) {
      const file = join(here, entry.name, 'kind.js');
      if (!entry.isDirectory() || !existsSync(file)) continue;
      const module = (await import(pathToFileURL(file).href)) as Record<string, unknown>;
      defined.push(...Object.values(module).filter(isKindDefinition));
    }
    assert.equal(defined.length, MANAGEMENT_KINDS.length);
    for (const kind of defined) {
      assert.ok(MANAGEMENT_KINDS.includes(kind), `${kind.info(GROUP).resource} is not in MANAGEMENT_KINDS`);
    }
  });

  it('names each resource and kind once', () => {
    const infos = managementKinds(GROUP).map((k) => k.info);
    assert.equal(new Set(infos.map((i) => i.resource)).size, infos.length);
    assert.equal(new Set(infos.map((i) => i.kind)).size, infos.length);
  });

  it('gives each kind a strategy with the names and schema it declares', () => {
    for (const kind of MANAGEMENT_KINDS) {
      const strategy = kind.strategy(GROUP, {});
      assert.deepEqual(strategy.info, kind.info(GROUP));
      assert.deepEqual(strategy.schema, kind.schema());
    }
  });

  it('derives what other parts of the server ask about the kinds from their traits', () => {
    // Pinned for the kinds of today (a new kind adds to these lists, never changes them).
    const identity = resourcesWhere(GROUP, (k) => k.traits.identity);
    const ruledOnly = resourcesWhere(GROUP, (k) => k.traits.accessRules && !k.traits.identity);
    const encrypted = resourcesWhere(GROUP, (k) => k.traits.encryptedByDefault);
    const sensitive = sensitiveFieldsByResource(GROUP);
    const expected: Record<string, readonly [boolean, boolean, boolean, readonly string[] | undefined]> = {
      // identity, access rules only (the identity cache's access holders), encrypted, sensitive fields
      sharedsecrets: [false, true, true, ['spec.data']],
      teams: [true, false, false, undefined],
      users: [true, false, false, undefined],
      ownedaccesskeys: [true, false, false, ['spec.key']],
      virtualclusterinstances: [false, true, false, undefined],
    };
    for (const [resource, [isIdentity, isRuledOnly, isEncrypted, fields]] of Object.entries(expected)) {
      assert.equal(identity.includes(resource), isIdentity, `${resource} identity`);
      assert.equal(ruledOnly.includes(resource), isRuledOnly, `${resource} access holder`);
      assert.equal(encrypted.includes(resource), isEncrypted, `${resource} encrypted by default`);
      assert.deepEqual(sensitive.get(resource), fields, `${resource} sensitive fields`);
    }
  });

  it('marks as identity kinds exactly the ones the identity cache has indexes for', () => {
    // A kind marked identity that the cache does not know would be watched for nothing.
    assert.deepEqual(
      resourcesWhere(GROUP, (k) => k.traits.identity).sort(),
      [ACCESS_KEYS, TEAMS, USERS].sort(),
    );
  });

  it('names only sensitive fields its schema has (a misspelt path would redact nothing)', () => {
    for (const kind of MANAGEMENT_KINDS) {
      for (const path of kind.traits.sensitiveFields) {
        assert.ok(schemaAt(kind.schema(), path), `${kind.info(GROUP).resource}: no field ${path}`);
      }
    }
    // Global Secret data is a map of values: every value is secret.
    const data = schemaAt(MANAGEMENT_KINDS[0]?.schema() ?? {}, 'spec.data');
    assert.ok(data && mapValueSchema(data));
  });
});
