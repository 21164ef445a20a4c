import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { ApiError } from '../apis/meta/errors.js';
import { MAX_NESTING_DEPTH } from '../registry/generic/object.js';
import { applyPatchYAMLError, decodeBody, decodeYAML, objectYAMLError, summarizeYAMLBody } from './body.js';

function badRequest(pattern: RegExp) {
  return (err: unknown): boolean => err instanceof ApiError && err.code === 400 && pattern.test(err.message);
}

describe('body decoding', () => {
  it('decodes JSON and reports malformed JSON briefly', () => {
    assert.deepEqual(decodeBody(Buffer.from('{"a":1}'), 'json').value, { a: 1 });
    assert.throws(
      () => decodeBody(Buffer.from('{"a":'), 'json'),
      badRequest(/^the request body is not valid JSON: /),
    );
    assert.throws(() => decodeBody(Buffer.from('  '), 'json'), badRequest(/empty/));
  });

  it('decodes a YAML map with YAML 1.1 scalars as values, as kube-apiserver does', () => {
    const { value, duplicates } = decodeYAML(
      'metadata:\n  name: x\nspec:\n  count: 3\n  s: yes\n  q: "yes"\n',
    );
    assert.deepEqual(value, { metadata: { name: 'x' }, spec: { count: 3, s: true, q: 'yes' } });
    assert.deepEqual(duplicates, []);
  });

  // Each expected value is what kube-apiserver 1.32's YAMLToJSON (sigs.k8s.io/yaml v1.4,
  // whose goyaml.v2 fork is gopkg.in/yaml.v2 2.4.0's code) makes of `v: <source>`, read
  // back by JSON.parse: resolve.go `resolve` types a plain scalar by YAML 1.1's rules and
  // a tagged one by its tag, decode.go `scalar` keeps a timestamp's text and decodes
  // `!!binary`, and json.Marshal writes the result (refusing ±Inf and NaN). Every row
  // was confirmed by running sigs.k8s.io/yaml v1.4.0's YAMLToJSON (Go 1.19) on it. Our
  // messages leave out the scalar upstream quotes in backticks (a value may be secret).
  const valueCases: readonly (readonly [string, unknown])[] = [
    ['yes', true],
    ['Yes', true],
    ['YES', true],
    ['y', true],
    ['Y', true],
    ['no', false],
    ['N', false],
    ['on', true],
    ['ON', true],
    ['off', false],
    ['Off', false],
    ['true', true],
    ['False', false],
    ['TRUE', true],
    ['~', null],
    ['null', null],
    ['Null', null],
    ['NULL', null],
    ['', null],
    ['0777', 511],
    ['0o17', 15],
    ['0x1F', 31],
    ['-0x1F', -31],
    ['0b101', 5],
    ['-0b101', -5],
    ['+12', 12],
    ['1_000', 1000],
    ['1__0', 10],
    ['_1', '_1'],
    ['08', 8],
    ['09.5', 9.5],
    ['-0', 0],
    ['1', 1],
    ['3.14159265358979', 3.14159265358979],
    ['1.0', 1],
    ['1.', 1],
    ['.5', 0.5],
    ['-.5', -0.5],
    ['+.5', 0.5],
    ['.5_0', 0.5],
    ['._5', '._5'],
    ['+1.5e3', 1500],
    ['1e3', 1000],
    ['1e20', 100000000000000000000],
    ['1e21', 1e21],
    ['0.0000001', 1e-7],
    ['1e-400', 0],
    ['1e400', '1e400'],
    ['-0.0', -0],
    ['9007199254740992', 9007199254740992],
    ['1000000000000000000', 1000000000000000000],
    ['-9223372036854775809', -9223372036854776000],
    ['18446744073709551616', 18446744073709552000],
    ['0x10000000000000000', '0x10000000000000000'],
    ['0777777777777777777777777', 7.777777777777778e23],
    ['2001-01-01', '2001-01-01'],
    ['2001-12-14t21:59:43.10-05:00', '2001-12-14t21:59:43.10-05:00'],
    ['1:20', '1:20'],
    ['1:20:30', '1:20:30'],
    ['12e', '12e'],
    ['0x', '0x'],
    ['.', '.'],
    ['+', '+'],
    ['.inf', { error: 'error converting YAML to JSON: json: unsupported value: +Inf' }],
    ['-.Inf', { error: 'error converting YAML to JSON: json: unsupported value: -Inf' }],
    ['.NaN', { error: 'error converting YAML to JSON: json: unsupported value: NaN' }],
    ['0.1', 0.1],
    ['=', '='],
    ['<<', '\u003c\u003c'],
    ['hello world', 'hello world'],
    ['!!str 12', '12'],
    ['!!str yes', 'yes'],
    ['!!int "12"', 12],
    ['!!int 0777', 511],
    ['!!int abc', { error: 'yaml: cannot decode !!str as a !!int' }],
    ['!!int 1.5', { error: 'yaml: cannot decode !!float as a !!int' }],
    ['!!float 1', 1],
    ['!!float 0x10', 16],
    ['!!float "3"', 3],
    ['!!bool yes', true],
    ['!!bool "off"', false],
    ['!!bool 1', { error: 'yaml: cannot decode !!int as a !!bool' }],
    ['!!null ~', null],
    ['!!null ""', null],
    ['!!null x', { error: 'yaml: cannot decode !!str as a !!null' }],
    ['!!binary aGVsbG8=', 'hello'],
    ['!!binary aGVsbG8', { error: 'yaml: !!binary value contains invalid base64 data' }],
    ['!!binary /w==', '\ufffd'],
    ['!!binary 4oI=', '\ufffd\ufffd'],
    ['!!timestamp 2001-01-01', '2001-01-01'],
    ['!!timestamp 2001-02-29', { error: 'yaml: cannot decode !!str as a !!timestamp' }],
    ['!!timestamp 2001-1-2 3:4:5.5', '2001-1-2 3:4:5.5'],
    ['!!timestamp x', { error: 'yaml: cannot decode !!str as a !!timestamp' }],
    ['! 12', '12'],
    ['!foo yes', 'yes'],
    ['"yes"', 'yes'],
    ["'0777'", '0777'],
    ['|-\n  yes', 'yes'],
  ];

  it("reads YAML values as kube-apiserver's YAMLToJSON does", () => {
    for (const [source, expected] of valueCases) {
      const text = `v: ${source}\n`;
      if (expected !== null && typeof expected === 'object' && 'error' in expected) {
        const message = String(expected.error).replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
        assert.throws(() => decodeYAML(text), badRequest(new RegExp(`^${message}$`)), source);
        continue;
      }
      assert.deepStrictEqual(decodeYAML(text).value, { v: expected }, source);
      // The same in a sequence and nested in a flow map, where the value is no map entry's.
      if (!source.includes('\n') && source !== '') {
        assert.deepStrictEqual(decodeYAML(`s: [${source}]\n`).value, { s: [expected] }, source);
      }
    }
  });

  // Each expected key is what kube-apiserver's YAMLToJSON (sigs.k8s.io/yaml v1.4 on its
  // goyaml.v2 fork) makes of the plain key: goyaml.v2 resolve.go `resolve` types the
  // scalar (YAML 1.1: bools by word, ints by strconv.ParseInt/ParseUint with base 0
  // after dropping '_', then yamlStyleFloat), and yaml.go `convertToJSONableObject`
  // writes an int with strconv.Itoa, a float64 with FormatFloat(f, 'g', -1, 32), a bool
  // as true/false. Checked against Debian's gopkg.in/yaml.v2 with that conversion.
  const keyCases: readonly (readonly [string, string])[] = [
    ['1', '1'],
    ['-5', '-5'],
    ['+7', '7'],
    ['-0', '0'],
    ['007', '7'],
    ['017', '15'],
    ['08', '8'],
    ['0o17', '15'],
    ['0x1F', '31'],
    ['0X1f', '31'],
    ['-0x1F', '-31'],
    ['+0x10', '16'],
    ['0b101', '5'],
    ['-0b101', '-5'],
    ['1_000', '1000'],
    ['1__0', '10'],
    ['_1', '_1'],
    ['9007199254740993', '9007199254740993'],
    ['9223372036854775807', '9223372036854775807'],
    ['-9223372036854775808', '-9223372036854775808'],
    ['-9223372036854775809', '-9.223372e+18'],
    ['18446744073709551616', '1.8446744e+19'],
    ['100000000000000000000', '1e+20'],
    ['16777217', '16777217'],
    ['1.5', '1.5'],
    ['0.1', '0.1'],
    ['0.3', '0.3'],
    ['3.14159265358979', '3.1415927'],
    ['1.0', '1'],
    ['1.', '1'],
    ['.5', '0.5'],
    ['-.5', '-0.5'],
    ['-0.0', '-0'],
    ['1e3', '1000'],
    ['1e6', '1e+06'],
    ['1e+06', '1e+06'],
    ['123456', '123456'],
    ['1234567', '1234567'],
    ['1234567.0', '1.234567e+06'],
    ['0.0001', '0.0001'],
    ['0.00001', '1e-05'],
    ['1e400', '1e400'],
    ['1e-400', '0'],
    ['.inf', '.inf'],
    ['+.inf', '.inf'],
    ['-.Inf', '-.inf'],
    ['.NaN', '.nan'],
    ['true', 'true'],
    ['True', 'true'],
    ['yes', 'true'],
    ['on', 'true'],
    ['y', 'true'],
    ['n', 'false'],
    ['no', 'false'],
    ['Off', 'false'],
    ['FALSE', 'false'],
    ['2001-01-01', '2001-01-01'],
    ['12e', '12e'],
    ['0x', '0x'],
  ];

  it("makes plain YAML map keys the JSON keys kube-apiserver's YAMLToJSON makes", () => {
    for (const [source, expected] of keyCases) {
      const { value } = decodeYAML(`spec:\n  data:\n    ${source}: v\n`);
      assert.deepEqual(value, { spec: { data: { [expected]: 'v' } } }, source);
      // Flow maps' keys are plain too.
      assert.deepEqual(decodeYAML(`data: {${source}: v}\n`).value, { data: { [expected]: 'v' } }, source);
    }
    // Quoted keys are strings as written; the value side is unchanged.
    assert.deepEqual(decodeYAML(`"1.0": a\n'yes': b\n"0x1F": c\n`).value, {
      '1.0': 'a',
      yes: 'b',
      '0x1F': 'c',
    });
    // Tagged keys are read by their tag (each confirmed with sigs.k8s.io/yaml v1.4.0's YAMLToJSON).
    assert.deepEqual(decodeYAML('!!str 1: a\n!!binary aGk=: b\n!!int "0x1F": c\n!!bool yes: d\n').value, {
      '1': 'a',
      hi: 'b',
      '31': 'c',
      true: 'd',
    });
    assert.deepEqual(decodeYAML('!!float 1: a\n').value, { '1': 'a' });
    assert.throws(() => decodeYAML('!!int x: a\n'), badRequest(/^yaml: cannot decode !!str as a !!int$/));
    // Past 2^53 only the value is refused.
    assert.throws(
      () => decodeYAML('9007199254740993: 9007199254740993\n'),
      badRequest(/cannot keep a number/),
    );
  });

  it('refuses a body in the order upstream finds its faults', () => {
    // goyaml.v2's decoding errors first, then convertToJSONableObject's keys, then
    // json.Marshal's values (each order confirmed with sigs.k8s.io/yaml v1.4.0), then the
    // integers the JSON decoder (or, past 2^53, this server) refuses.
    assert.throws(
      () => decodeYAML('a: .inf\nb: !!int x\n'),
      badRequest(/^yaml: cannot decode !!str as a !!int$/),
    );
    assert.throws(
      () => decodeYAML('a: .inf\n~: 1\n'),
      badRequest(/unsupported map key of type: %!s\(<nil>\)/),
    );
    assert.throws(
      () => decodeYAML('a: 9007199254740993\nb: .nan\n'),
      badRequest(/json: unsupported value: NaN$/),
    );
    assert.throws(() => decodeYAML('a: 9007199254740993\n~: 1\n'), badRequest(/unsupported map key/));
  });

  it('refuses the keys YAMLToJSON cannot convert, in its words but without the value', () => {
    // Upstream adds `, value: %+#v` of the entry's value: here a Global Secret's value, never echoed.
    const refused = (pattern: RegExp) => badRequest(pattern);
    assert.throws(
      () => decodeYAML('data:\n  9223372036854775808: c2VjcmV0\n'),
      refused(
        /^error converting YAML to JSON: unsupported map key of type: uint64, key: 0x8000000000000000$/,
      ),
    );
    assert.throws(
      () => decodeYAML('data:\n  0xFFFFFFFFFFFFFFFF: [1, a]\n'),
      refused(
        /^error converting YAML to JSON: unsupported map key of type: uint64, key: 0xffffffffffffffff$/,
      ),
    );
    // Hex past uint64 is no number to v1.4's goyaml.v2 fork: a string key (decimal ones become floats above).
    assert.deepEqual(decodeYAML('0x10000000000000000: 1\n').value, { '0x10000000000000000': 1 });
    for (const nullKey of ['null: x\n', '~: x\n', 'Null: x\n', ': x\n']) {
      assert.throws(
        () => decodeYAML(nullKey),
        refused(/^error converting YAML to JSON: unsupported map key of type: %!s\(<nil>\), key: <nil>$/),
        nullKey,
      );
    }
  });

  it('finds duplicate keys as goyaml.v2 types them', () => {
    // goyaml.v2's UnmarshalStrict: 1 and 0x1 are the int 1 twice; "1" is a string; 1.5 and 1.50 one float.
    const { duplicates } = decodeYAML('1: a\n0x1: b\n"1": c\n1.5: d\n1.50: e\ntrue: f\nyes: g\n');
    assert.deepEqual(duplicates, [
      'line 2: key 1 already set in map',
      'line 5: key 1.5 already set in map',
      'line 7: key true already set in map',
    ]);
  });

  it('reports duplicate keys with their line', () => {
    const { value, duplicates } = decodeYAML('a: 1\nb:\n  c: 1\n  c: 2\na: 3\n');
    assert.deepEqual(value, { a: 3, b: { c: 2 } });
    assert.deepEqual(duplicates, [
      'line 4: key "c" already set in map',
      'line 5: key "a" already set in map',
    ]);
  });

  it('refuses alias bombs, several documents, non-maps, empty and malformed YAML', () => {
    const bomb = [
      'a: &a ["x","x","x","x","x","x","x","x","x"]',
      'b: &b [*a,*a,*a,*a,*a,*a,*a,*a,*a]',
      'c: &c [*b,*b,*b,*b,*b,*b,*b,*b,*b]',
      'd: &d [*c,*c,*c,*c,*c,*c,*c,*c,*c]',
      'e: &e [*d,*d,*d,*d,*d,*d,*d,*d,*d]',
    ].join('\n');
    assert.throws(() => decodeYAML(bomb), badRequest(/^yaml: document contains excessive aliasing$/));
    assert.throws(() => decodeYAML('a: 1\n---\nb: 2\n'), badRequest(/single YAML document/));
    assert.throws(() => decodeYAML('- 1\n- 2\n'), badRequest(/YAML map/));
    assert.throws(() => decodeYAML('just a string'), badRequest(/YAML map/));
    assert.throws(() => decodeYAML(''), badRequest(/empty/));
    assert.throws(() => decodeYAML('# only a comment\n'), badRequest(/empty/));
    assert.throws(() => decodeYAML('a: [1,\n'), badRequest(/^the request body is not valid YAML: line \d+/));
  });
});

describe('hostile bodies', () => {
  const nested = (levels: number): string => `${'{"a":'.repeat(levels - 1)}{}${'}'.repeat(levels - 1)}`;

  it('decodes JSON nested to the limit and refuses one level more', () => {
    assert.equal(decodeBody(Buffer.from(nested(MAX_NESTING_DEPTH)), 'json').value !== undefined, true);
    assert.throws(
      () => decodeBody(Buffer.from(nested(MAX_NESTING_DEPTH + 1)), 'json'),
      badRequest(/^the request body is nested too deeply: exceeded max depth of 1000$/),
    );
    const huge = `{"spec":{"x":${'['.repeat(500_000)}${']'.repeat(500_000)}}}`;
    assert.throws(() => decodeBody(Buffer.from(huge), 'json'), badRequest(/exceeded max depth/));
  });

  it('refuses integers beyond int64 that JSON.parse would round into range', () => {
    const body = '{"spec":{"tokenGeneration":9223372036854775808}}';
    assert.throws(
      () => decodeBody(Buffer.from(body), 'json'),
      badRequest(
        /^json: cannot unmarshal number into Go value of type int64 \(field spec\.tokenGeneration\)$/,
      ),
    );
    // In int64, so past this check (the exact check below is the one that refuses it).
    const max = decodeBody(Buffer.from('{"spec":{"ttl":9223372036854775807}}'), 'json', false);
    assert.deepEqual(max.duplicates, []);
    assert.throws(
      () => decodeYAML('spec:\n  ttl: 9223372036854775808\n'),
      badRequest(/^yaml: cannot unmarshal number into Go value of type int64$/),
    );
    assert.throws(
      () => decodeYAML('spec:\n  ttl: 0x8000000000000000\n'),
      badRequest(/cannot unmarshal number/),
    );
    assert.deepEqual(decodeYAML('spec:\n  ttl: 9223372036854775807\n', false).duplicates, []);
  });

  it('never quotes the number it refuses, which may be a secret value', () => {
    for (const [body, format] of [
      ['{"data":{"password":9007199254740993}}', 'json'],
      ['{"data":{"password":123456789012345678901}}', 'json'],
      ['data:\n  password: 9007199254740993\n', 'yaml'],
      ['data:\n  password: 9223372036854775809\n', 'yaml'],
    ] as const) {
      assert.throws(
        () => decodeBody(Buffer.from(body), format),
        (err: unknown) => {
          const message = err instanceof Error ? err.message : String(err);
          assert.doesNotMatch(message, /9007199254740993|12345678901234567890|9223372036854775809/, message);
          return true;
        },
      );
    }
  });

  it('refuses integers a double would change, and keeps those that come back as sent', () => {
    const rounded = '{"spec":{"ttl":9007199254740993,"n":1}}';
    assert.throws(
      () => decodeBody(Buffer.from(rounded), 'json'),
      badRequest(
        /^json: cannot keep a number \(field spec\.ttl\) exactly: this server holds integers beyond ±9007199254740992 as 64-bit floats, which would change it$/,
      ),
    );
    assert.throws(
      () => decodeBody(Buffer.from('{"items":[{"a":-9223372036854775807}]}'), 'json'),
      badRequest(/^json: cannot keep a number \(field items\[0\]\.a\) exactly: /),
    );
    assert.throws(
      () => decodeYAML('spec:\n  ttl: 9007199254740993\n'),
      badRequest(/^yaml: cannot keep a number exactly: /),
    );
    assert.throws(() => decodeYAML('spec:\n  ttl: 0x20000000000001\n'), badRequest(/cannot keep a number/));
    // A double holds 2^62, but it would be written back as 4611686018427388000.
    assert.throws(
      () => decodeBody(Buffer.from('{"b":4611686018427387904}'), 'json'),
      badRequest(/cannot keep a number \(field b\)/),
    );
    assert.throws(() => decodeYAML('b: 4611686018427387904\n'), badRequest(/^yaml: cannot keep a number exactly: /));
    // What comes back as sent is kept: 2^53, 10^18, every integer of up to 15 digits.
    const exact = decodeBody(
      Buffer.from('{"a":9007199254740992,"b":1000000000000000000,"c":-999999999999999,"d":1.5e300}'),
      'json',
    ).value;
    assert.equal(
      JSON.stringify(exact),
      '{"a":9007199254740992,"b":1000000000000000000,"c":-999999999999999,"d":1.5e+300}',
    );
    assert.deepEqual(decodeYAML('b: 1000000000000000000\n').value, { b: 1e18 });
    // Numbers in strings are text, and bodies whose numbers are only read may round them.
    assert.deepEqual(decodeBody(Buffer.from('{"a":"9007199254740993"}'), 'json').value, {
      a: '9007199254740993',
    });
    assert.deepEqual(
      decodeBody(Buffer.from('{"gracePeriodSeconds":9007199254740993}'), 'json', false).value,
      {
        gracePeriodSeconds: 9007199254740992,
      },
    );
  });

  it('reports JSON duplicate fields with their path for Warn and as one strict error', () => {
    const decoded = decodeBody(
      Buffer.from('{"metadata":{"name":"a","name":"b"},"kind":"T","kind":"U"}'),
      'json',
    );
    assert.deepEqual(decoded.value, { metadata: { name: 'b' }, kind: 'U' });
    assert.deepEqual(decoded.duplicates, ['duplicate field "metadata.name"', 'duplicate field "kind"']);
    assert.equal(decoded.strictError, 'duplicate field "metadata.name", duplicate field "kind"');
  });

  it('refuses YAML anchors whose value contains their own alias', () => {
    assert.throws(
      () => decodeYAML('metadata: &m {name: x, labels: *m}\n'),
      badRequest(/^yaml: anchor 'm' value contains itself$/),
    );
    assert.throws(() => decodeYAML('a: &a [*a]\n'), badRequest(/^yaml: anchor 'a' value contains itself$/));
    assert.throws(
      () => decodeYAML('a: &a\n  b:\n    - c: *a\n'),
      badRequest(/anchor 'a' value contains itself/),
    );
    // An alias to an earlier, closed anchor is ordinary YAML.
    assert.deepEqual(decodeYAML('a: &a {x: 1}\nb: *a\n').value, { a: { x: 1 }, b: { x: 1 } });
  });

  it('refuses YAML nested past the limit, by text or through aliases', () => {
    const block = (levels: number): string =>
      Array.from({ length: levels }, (_, i) => `${'  '.repeat(i)}a:`).join('\n') + ' 1\n';
    // The YAML parser's own recursion gives out some hundreds of levels deep: a 400 too.
    assert.doesNotThrow(() => decodeYAML(block(100)));
    assert.throws(() => decodeYAML(block(MAX_NESTING_DEPTH + 1)), badRequest(/exceeded max depth/));
    assert.throws(
      () => decodeYAML(`a: ${'['.repeat(100_000)}${']'.repeat(100_000)}\n`),
      badRequest(/^the request body is nested too deeply: exceeded max depth/),
    );
    // Each anchor is 400 levels deep and holds the one before: 1,200 levels in all.
    const chained = [
      `x: &x ${'['.repeat(400)}1${']'.repeat(400)}`,
      `y: &y ${'['.repeat(399)}*x${']'.repeat(399)}`,
      `z: ${'['.repeat(399)}*y${']'.repeat(399)}`,
    ].join('\n');
    assert.throws(() => decodeYAML(chained), badRequest(/exceeded max depth/));
  });
});

describe("YAMLToJSON's errors, worded per verb as kube-apiserver words them", () => {
  const body = 'apiVersion: management.platform.dev/v1\nkind: Team\nmetadata:\n  ? [a]\n  : x\n';
  const key = 'yaml: invalid map key: []interface {}{...}';

  it('create and update: transformDecodeError, with the summary of the first 30 bytes', () => {
    const raw = Buffer.from(body);
    assert.throws(
      () => decodeBody(raw, 'yaml', true, objectYAMLError('Team', raw)),
      badRequest(
        new RegExp(
          `^${escape(`the object provided is unrecognized (must be of type Team): ${key} (`)}` +
            `${raw.subarray(0, 30).toString('hex')} \\.\\.\\.\\)$`,
        ),
      ),
    );
    const big = Buffer.from('apiVersion: v1\nspec:\n  9223372036854775808: x\n');
    assert.throws(
      () => decodeBody(big, 'yaml', true, objectYAMLError('Team', big)),
      badRequest(
        /^the object provided is unrecognized \(must be of type Team\): unsupported map key of type: uint64, key: 0x8000000000000000 \(<not shown: may hold secret values>\)$/,
      ),
    );
  });

  it('apply: sigs.k8s.io/yaml Unmarshal and handlers/patch.go prefix it', () => {
    assert.throws(
      () => decodeYAML(body, true, applyPatchYAMLError),
      badRequest(new RegExp(`^${escape(`error decoding YAML: error converting YAML to JSON: ${key}`)}$`)),
    );
    assert.throws(
      () => decodeYAML('a: .inf\n', true, applyPatchYAMLError),
      badRequest(/^error decoding YAML: error converting YAML to JSON: json: unsupported value: \+Inf$/),
    );
  });

  it('summarizes a body as summarizeData does, showing only envelope bytes', () => {
    const envelope = Buffer.from('kind: Team\napiVersion: management.platform.dev/v1\n');
    assert.equal(summarizeYAMLBody(envelope), `${envelope.subarray(0, 30).toString('hex')} ...`);
    assert.equal(summarizeYAMLBody(Buffer.from('kind: Team\n')), Buffer.from('kind: Team\n').toString('hex'));
    assert.equal(summarizeYAMLBody(Buffer.from('kind: Team\napiVer')), Buffer.from('kind: Team\napiVer').toString('hex'));
    assert.equal(summarizeYAMLBody(Buffer.from('{"apiVersion": "v1"}')), '{"apiVersion": "v1"}');
    assert.equal(summarizeYAMLBody(Buffer.alloc(0)), '<empty>');
    // A Global Secret's data in the first bytes is never shown, in hex or as text.
    for (const secret of [
      'kind: Team\nspec: {data: {k: c2VjcmV0}}\n',
      'data: c2VjcmV0\n',
      '{"kind": "x", "spec": "c2VjcmV0"}',
      // Only whole envelope fields: not a comment after one, nor a map in its place.
      'kind: Secret # password hunter2\n[a]: b\n',
      'apiVersion: v1\nkind: {password: hunter2}\n? [a]\n: b\n',
      '{"kind": {"password": "hunter2"}}',
      'apiVersion: v1\n  password: x\n',
    ]) {
      assert.equal(summarizeYAMLBody(Buffer.from(secret)), '<not shown: may hold secret values>', secret);
    }
    // Envelope fields cut short by the 30 bytes are shown; a flow body as UTF-8 text, as Go's string of the bytes.
    const cut = Buffer.from('apiVersion: v1\nkind: SharedSecret\nmetadata: {}\n');
    assert.equal(summarizeYAMLBody(cut), `${cut.subarray(0, 30).toString('hex')} ...`);
    const flow = Buffer.from('{"apiVersion": "management.platform.dev/v1", "kind": "Team"}');
    assert.equal(summarizeYAMLBody(flow), '{"apiVersion": "management.pla ...');
    for (const kind of ['Team', 'Teams', 'Teamss', 'Teamsss', 'Teamssssssssss']) {
      const cutKey = Buffer.from(`{"kind": "${kind}", "apiVersion": "v1"}`);
      assert.equal(summarizeYAMLBody(cutKey), `${cutKey.subarray(0, 30).toString()} ...`, kind);
    }
    const utf8 = Buffer.from('{"kind": "Té", "apiVersion": "x"}');
    assert.equal(summarizeYAMLBody(utf8), '<not shown: may hold secret values>');
  });
});

function escape(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

// Bodies the old decoder took minutes over (every alias resolved by walking the whole
// document, merged copies walked again): each must now decode in one pass. The bound is
// generous, for a shared machine: linear decoding takes well under a second.
describe('YAML bodies of many aliases and merges decode in one pass', () => {
  const bound = 20_000;
  const timed = (text: string): unknown => {
    const started = Date.now();
    const { value } = decodeYAML(text);
    assert.ok(Date.now() - started < bound, `decoded in ${Date.now() - started} ms`);
    return value;
  };

  it('20,000 aliases to one empty map', () => {
    let text = 'apiVersion: v1\nkind: X\ne: &e {}\n';
    for (let i = 0; i < 20_000; i++) text += `x${i}: *e\n`;
    const value = timed(text) as Record<string, unknown>;
    assert.equal(Object.keys(value).length, 20_003);
    assert.deepEqual(value['x19999'], {});
  });

  it('a large anchor, many aliases and merges of it', () => {
    let text = 'b: &b {';
    text += Array.from({ length: 1000 }, (_, i) => `k${i}: ${i}`).join(', ');
    text += '}\n';
    for (let i = 0; i < 1500; i++) text += `a${i}: &e${i} {}\nr${i}: *e${i}\n`;
    for (let i = 0; i < 30; i++) text += `m${i}: {<<: *b}\n`;
    const value = timed(text) as Record<string, Record<string, unknown>>;
    assert.equal(Object.keys(value['m29'] ?? {}).length, 1000);
    assert.equal(value['m29']?.['k999'], 999);
  });
});
