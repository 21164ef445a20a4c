// The order of a merged set or list-map, as structured-merge-diff v4.4.2 (vendored
// by kube-apiserver 1.32) makes it: typed/merge.go's list walk takes the applied
// configuration's items in its own order, each live item the configuration leaves
// alone where it stood, and a live item the configuration also holds at the
// configuration's place (4.1.2 kept the live order and appended new items). The
// cases are every triplet (live, configuration, merged) of smd v4.4.2's
// typed/merge_test.go groups "struct grab bag" and "associative list", over the same
// schemas, compared as smd compares them (value.Equals: lists in order).
//
// The smd oracle (hack/smd-oracle) runs 4.1.2, so it cannot prove this order; these
// cases do.

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { fromOpenAPI } from './schema.js';
import { mergeValues } from './typed.js';
import type { Value } from './value.js';

const set = (type: string): Record<string, unknown> => ({
  type: 'array',
  'x-kubernetes-list-type': 'set',
  items: { type },
});

const schemas: Record<string, ReturnType<typeof fromOpenAPI>> = {
  'struct grab bag': fromOpenAPI({
    type: 'object',
    properties: {
      numeric: { type: 'number' },
      string: { type: 'string' },
      bool: { type: 'boolean' },
      setStr: set('string'),
      setBool: set('boolean'),
      setNumeric: set('number'),
    },
  }),
  'associative list': fromOpenAPI({
    type: 'object',
    properties: {
      list: {
        type: 'array',
        'x-kubernetes-list-type': 'map',
        'x-kubernetes-list-map-keys': ['key', 'id'],
        items: {
          type: 'object',
          properties: {
            key: { type: 'string' },
            id: { type: 'number' },
            value: { type: 'object', additionalProperties: { type: 'string' } },
            bv: { type: 'boolean' },
            nv: { type: 'number' },
          },
        },
      },
      atomicList: { type: 'array', items: { type: 'string' } },
    },
  }),
};

/** Per group, [live, configuration, merged]: smd v4.4.2 typed/merge_test.go, verbatim values. */
// prettier-ignore
const TRIPLETS: Readonly<Record<string, readonly (readonly [string, string, string])[]>> = {
  'struct grab bag': [
    ['{"numeric":1}', '{"numeric":3.14159}', '{"numeric":3.14159}'],
    ['{"numeric":3.14159}', '{"numeric":1}', '{"numeric":1}'],
    ['{"string":"aoeu"}', '{"bool":true}', '{"string":"aoeu","bool":true}'],
    ['{"setStr":["a","b","c"]}', '{"setStr":["a","b"]}', '{"setStr":["a","b","c"]}'],
    ['{"setStr":["a","b"]}', '{"setStr":["a","b","c"]}', '{"setStr":["a","b","c"]}'],
    ['{"setStr":["a","b","c"]}', '{"setStr":[]}', '{"setStr":["a","b","c"]}'],
    ['{"setStr":[]}', '{"setStr":["a","b","c"]}', '{"setStr":["a","b","c"]}'],
    ['{"setStr":["a","b"]}', '{"setStr":["b","a"]}', '{"setStr":["b","a"]}'],
    ['{"setStr":["a","b","c"]}', '{"setStr":["d","e","f"]}', '{"setStr":["a","b","c","d","e","f"]}'],
    ['{"setStr":["a","b","c"]}', '{"setStr":["c","d","e","f"]}', '{"setStr":["a","b","c","d","e","f"]}'],
    ['{"setStr":["a","b","c","g","f"]}', '{"setStr":["c","d","e","f"]}', '{"setStr":["a","b","c","g","d","e","f"]}'],
    ['{"setStr":["a","b","c"]}', '{"setStr":["d","e","f","x","y","z"]}', '{"setStr":["a","b","c","d","e","f","x","y","z"]}'],
    ['{"setStr":["c","d","e","f"]}', '{"setStr":["a","c","e"]}', '{"setStr":["a","c","d","e","f"]}'],
    ['{"setStr":["a","b","c","x","y","z"]}', '{"setStr":["d","e","f"]}', '{"setStr":["a","b","c","x","y","z","d","e","f"]}'],
    ['{"setStr":["a","b","c","x","y","z"]}', '{"setStr":["d","e","f","x","y","z"]}', '{"setStr":["a","b","c","d","e","f","x","y","z"]}'],
    ['{"setStr":["c","a","g","f"]}', '{"setStr":["c","f","a","g"]}', '{"setStr":["c","f","a","g"]}'],
    ['{"setStr":["a","b","c","d"]}', '{"setStr":["d","e","f","a"]}', '{"setStr":["b","c","d","e","f","a"]}'],
    ['{"setStr":["c","d","e","f","g","h","i","j"]}', '{"setStr":["2","h","3","e","4","k","l"]}', '{"setStr":["c","d","f","g","2","h","i","j","3","e","4","k","l"]}'],
    ['{"setStr":["a","b","c","d","e","f","g","h","i","j"]}', '{"setStr":["1","b","2","h","3","e","4","k","l"]}', '{"setStr":["a","1","b","c","d","f","g","2","h","i","j","3","e","4","k","l"]}'],
    ['{"setStr":["a","b","b"]}', '{"setStr":["c"]}', '{"setStr":["a","b","b","c"]}'],
    ['{"setStr":["a","b","b"]}', '{"setStr":["b"]}', '{"setStr":["a","b"]}'],
    ['{"setStr":["a","b","b"]}', '{"setStr":["a"]}', '{"setStr":["a","b","b"]}'],
    ['{"setStr":["a","b","c","d","e","c"]}', '{"setStr":["1","b","2","e","d"]}', '{"setStr":["a","1","b","c","2","e","c","d"]}'],
    ['{"setStr":["a","b","c","d","e","c"]}', '{"setStr":["1","b","2","c","e","d"]}', '{"setStr":["a","1","b","2","c","e","d"]}'],
    ['{"setStr":["a","a","b","b"]}', '{"setStr":["b","c","d"]}', '{"setStr":["a","a","b","c","d"]}'],
    ['{"setStr":["a","a","b","b"]}', '{"setStr":[]}', '{"setStr":["a","a","b","b"]}'],
    ['{"setBool":[true]}', '{"setBool":[false]}', '{"setBool":[true,false]}'],
    ['{"setNumeric":[1,2,3.14159]}', '{"setNumeric":[1,2,3]}', '{"setNumeric":[1,2,3.14159,3]}'],
    ['{"setStr":["c","a","g","f","c","a"]}', '{"setStr":["c","f","a","g"]}', '{"setStr":["c","f","a","g"]}'],
    ['{"setNumeric":[1,2,3.14159,1,2]}', '{"setNumeric":[1,2,3]}', '{"setNumeric":[1,2,3.14159,3]}'],
    ['{"setBool":[true,false,true]}', '{"setBool":[false]}', '{"setBool":[true,false,true]}'],
    ['{"setBool":[true,false,true]}', '{"setBool":[true]}', '{"setBool":[true,false]}'],
  ],
  'associative list': [
    ['{"list":[{"key":"a","id":1,"value":{"a":"a"}}]}', '{"list":[{"key":"a","id":1,"value":{"a":"a"}}]}', '{"list":[{"key":"a","id":1,"value":{"a":"a"}}]}'],
    ['{"list":[{"key":"a","id":1,"value":{"a":"a"}}]}', '{"list":[{"key":"a","id":2,"value":{"a":"a"}}]}', '{"list":[{"key":"a","id":1,"value":{"a":"a"}},{"key":"a","id":2,"value":{"a":"a"}}]}'],
    ['{"list":[{"key":"a","id":1},{"key":"b","id":1}]}', '{"list":[{"key":"a","id":1},{"key":"a","id":2}]}', '{"list":[{"key":"a","id":1},{"key":"b","id":1},{"key":"a","id":2}]}'],
    ['{"list":[{"key":"b","id":2}]}', '{"list":[{"key":"a","id":1},{"key":"b","id":2},{"key":"c","id":3}]}', '{"list":[{"key":"a","id":1},{"key":"b","id":2},{"key":"c","id":3}]}'],
    ['{"list":[{"key":"a","id":1},{"key":"b","id":2},{"key":"c","id":3}]}', '{"list":[{"key":"c","id":3},{"key":"b","id":2}]}', '{"list":[{"key":"a","id":1},{"key":"c","id":3},{"key":"b","id":2}]}'],
    ['{"list":[{"key":"a","id":1},{"key":"b","id":2},{"key":"c","id":3}]}', '{"list":[{"key":"c","id":3},{"key":"a","id":1}]}', '{"list":[{"key":"b","id":2},{"key":"c","id":3},{"key":"a","id":1}]}'],
    ['{"atomicList":["a","a","a"]}', '{"atomicList":null}', '{"atomicList":null}'],
    ['{"atomicList":["a","b","c"]}', '{"atomicList":[]}', '{"atomicList":[]}'],
    ['{"atomicList":["a","a","a"]}', '{"atomicList":["a","a"]}', '{"atomicList":["a","a"]}'],
    ['{"list":[{"key":"a","id":1,"bv":true},{"key":"b","id":2},{"key":"a","id":1,"bv":false,"nv":2}]}', '{"list":[{"key":"a","id":1,"nv":3},{"key":"c","id":3},{"key":"b","id":2}]}', '{"list":[{"key":"a","id":1,"nv":3},{"key":"c","id":3},{"key":"b","id":2}]}'],
    ['{"list":[{"key":"a","id":1,"nv":1},{"key":"a","id":1,"nv":2}]}', '{"list":[]}', '{"list":[{"key":"a","id":1,"nv":1},{"key":"a","id":1,"nv":2}]}'],
    ['{"list":[{"key":"a","id":1,"nv":1},{"key":"a","id":1,"nv":2}]}', '{}', '{"list":[{"key":"a","id":1,"nv":1},{"key":"a","id":1,"nv":2}]}'],
  ],
};

describe("merged lists in smd v4.4.2's order (its typed/merge_test.go cases)", () => {
  for (const [group, triplets] of Object.entries(TRIPLETS))
    for (const [i, [live, config, merged]] of triplets.entries()) {
      it(`${group} #${i}: ${live} + ${config}`, () => {
        const atom = schemas[group];
        assert.ok(atom);
        assert.deepEqual(
          mergeValues(JSON.parse(live) as Value, JSON.parse(config) as Value, atom),
          JSON.parse(merged),
        );
      });
    }
});
