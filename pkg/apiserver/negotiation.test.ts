import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { ApiError } from '../apis/meta/errors.js';
import {
  negotiateInput,
  negotiateOutput,
  negotiatePatchType,
  notAcceptable,
  parseAccept,
  wantsPretty,
} from './negotiation.js';

const RESOURCE = { kind: 'resource', table: true } as const;

describe('Accept negotiation', () => {
  it('defaults to JSON and honours YAML and wildcards', () => {
    assert.deepEqual(negotiateOutput(undefined, RESOURCE), { mediaType: 'application/json', pretty: false });
    assert.equal(negotiateOutput('application/yaml', RESOURCE)?.mediaType, 'application/yaml');
    assert.equal(negotiateOutput('*/*', RESOURCE)?.mediaType, 'application/json');
    assert.equal(negotiateOutput('application/*', RESOURCE)?.mediaType, 'application/json');
    assert.equal(
      negotiateOutput('text/html, application/yaml;q=0.5', RESOURCE)?.mediaType,
      'application/yaml',
    );
    assert.equal(negotiateOutput('application/vnd.kubernetes.protobuf', RESOURCE), undefined);
    assert.equal(
      negotiateOutput('application/vnd.kubernetes.protobuf,application/json', RESOURCE)?.mediaType,
      'application/json',
    );
  });

  it('orders clauses by q, then specificity, then header order', () => {
    const order = parseAccept('*/*;q=0.8, application/yaml;q=0.9, application/json, application/*').map(
      (c) => `${c.type}/${c.subtype}`,
    );
    assert.deepEqual(order, ['application/json', 'application/*', 'application/yaml', '*/*']);
  });

  it("picks kubectl's Table clause, in the version asked for", () => {
    const accept =
      'application/json;as=Table;v=v1;g=meta.k8s.io,application/json;as=Table;v=v1beta1;g=meta.k8s.io,application/json';
    assert.deepEqual(negotiateOutput(accept, RESOURCE)?.convert, {
      kind: 'Table',
      group: 'meta.k8s.io',
      version: 'v1',
    });
    const beta = 'application/json;as=Table;v=v1beta1;g=meta.k8s.io, application/json';
    assert.equal(negotiateOutput(beta, RESOURCE)?.convert?.version, 'v1beta1');
  });

  it('skips a Table clause when the resource has no table conversion', () => {
    const accept = 'application/json;as=Table;v=v1;g=meta.k8s.io,application/json';
    const out = negotiateOutput(accept, { kind: 'resource', table: false });
    assert.equal(out?.convert, undefined);
    assert.equal(out?.mediaType, 'application/json');
    assert.equal(
      negotiateOutput('application/json;as=Table;v=v1;g=meta.k8s.io', { kind: 'resource', table: false }),
      undefined,
    );
  });

  it('accepts the metadata client conversions and rejects unknown ones', () => {
    const metadataClient =
      'application/vnd.kubernetes.protobuf;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1,application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1,application/json';
    assert.equal(negotiateOutput(metadataClient, RESOURCE)?.convert?.kind, 'PartialObjectMetadataList');
    assert.equal(negotiateOutput('application/json;as=Foo;g=meta.k8s.io;v=v1', RESOURCE), undefined);
    assert.equal(negotiateOutput('application/json;as=Table;g=other.io;v=v1', RESOURCE), undefined);
    assert.equal(
      negotiateOutput('application/json;as=Table;v=v1;g=meta.k8s.io', { kind: 'plain' }),
      undefined,
    );
  });

  it('converts watch events to PartialObjectMetadata, never to a list (406 when that is all that is asked)', () => {
    const one = 'application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1';
    assert.equal(negotiateOutput(one, RESOURCE, true)?.convert?.kind, 'PartialObjectMetadata');
    const list = 'application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1';
    assert.equal(negotiateOutput(list, RESOURCE, true), undefined);
    // A later plain clause still serves the watch, unconverted.
    const out = negotiateOutput(`${list},application/json`, RESOURCE, true);
    assert.equal(out?.mediaType, 'application/json');
    assert.equal(out?.convert, undefined);
    // Lists still convert to the list form.
    assert.equal(negotiateOutput(list, RESOURCE)?.convert?.kind, 'PartialObjectMetadataList');
  });

  it('recognises aggregated discovery params in any order on /apis only', () => {
    const v2 = 'application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,application/json';
    assert.equal(negotiateOutput(v2, { kind: 'discovery' })?.convert?.kind, 'APIGroupDiscoveryList');
    const shuffled = 'application/json;as=APIGroupDiscoveryList;v=v2;g=apidiscovery.k8s.io';
    assert.equal(negotiateOutput(shuffled, { kind: 'discovery' })?.convert?.kind, 'APIGroupDiscoveryList');
    const beta = 'application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList,application/json';
    assert.equal(negotiateOutput(beta, { kind: 'discovery' })?.convert, undefined);
  });

  it('refuses YAML for watch streams', () => {
    assert.equal(negotiateOutput('application/yaml', RESOURCE, true), undefined);
    assert.equal(
      negotiateOutput('application/json;stream=watch', RESOURCE, true)?.mediaType,
      'application/json',
    );
    assert.equal(
      notAcceptable(true).message,
      'only the following media types are accepted: application/json;stream=watch',
    );
    assert.equal(
      notAcceptable().message,
      'only the following media types are accepted: application/json, application/yaml',
    );
  });

  it('pretty-prints for ?pretty and human user agents only', () => {
    assert.equal(wantsPretty(new URLSearchParams('pretty=true'), 'kubectl/v1.32'), true);
    assert.equal(wantsPretty(new URLSearchParams('pretty=false'), 'curl/8.0'), false);
    assert.equal(wantsPretty(undefined, 'curl/8.0'), true);
    assert.equal(wantsPretty(undefined, 'Wget/1.21'), true);
    assert.equal(wantsPretty(undefined, 'kubectl/v1.32'), false);
    assert.equal(negotiateOutput('application/json;pretty=1', RESOURCE)?.pretty, true);
  });
});

describe('Accept negotiation, remembered per header', () => {
  const TABLE = 'application/json;as=Table;v=v1;g=meta.k8s.io';

  it('answers a repeated header as it did the first time, per kind of endpoint and stream', () => {
    for (let i = 0; i < 3; i++) {
      assert.deepEqual(negotiateOutput(TABLE, RESOURCE)?.convert, { kind: 'Table', group: 'meta.k8s.io', version: 'v1' });
      // The same header where tables are not served: refused, not the remembered Table.
      assert.equal(negotiateOutput(TABLE, { kind: 'resource', table: false }), undefined);
      assert.equal(negotiateOutput(TABLE, { kind: 'plain' }), undefined);
      // A watch asking for YAML is refused; the same header for a get is YAML.
      assert.equal(negotiateOutput('application/yaml', RESOURCE, true), undefined);
      assert.equal(negotiateOutput('application/yaml', RESOURCE)?.mediaType, 'application/yaml');
    }
  });

  it('still negotiates right after many distinct headers (the memo is bounded)', () => {
    for (let i = 0; i < 500; i++) {
      assert.equal(negotiateOutput(`application/json;x=${i}`, RESOURCE)?.mediaType, 'application/json');
    }
    assert.equal(negotiateOutput('application/yaml', RESOURCE)?.mediaType, 'application/yaml');
    assert.equal(negotiateOutput(TABLE, RESOURCE)?.convert?.kind, 'Table');
  });

  it('shares answers that cannot be changed by a caller', () => {
    const output = negotiateOutput(TABLE, RESOURCE);
    assert.ok(output && Object.isFrozen(output) && Object.isFrozen(output.convert));
  });
});

describe('Content-Type negotiation', () => {
  it('decodes JSON by default and YAML when asked; anything else is 415', () => {
    assert.equal(negotiateInput(undefined), 'json');
    assert.equal(negotiateInput('application/json; charset=utf-8'), 'json');
    assert.equal(negotiateInput('application/yaml'), 'yaml');
    assert.throws(
      () => negotiateInput('text/plain'),
      (err: unknown) =>
        err instanceof ApiError &&
        err.code === 415 &&
        err.message ===
          'the body of the request was in an unknown format - accepted media types include: application/json, application/yaml',
    );
  });

  it('maps patch content types to patch types', () => {
    assert.equal(negotiatePatchType('application/json-patch+json'), 'json');
    assert.equal(negotiatePatchType('application/merge-patch+json; charset=utf-8'), 'merge');
    assert.equal(negotiatePatchType('application/strategic-merge-patch+json'), 'strategic');
    assert.equal(negotiatePatchType('application/apply-patch+yaml'), 'apply');
    assert.throws(
      () => negotiatePatchType('application/json'),
      (err: unknown) =>
        err instanceof ApiError &&
        err.code === 415 &&
        err.message ===
          'the body of the request was in an unknown format - accepted media types include: application/json-patch+json, application/merge-patch+json, application/strategic-merge-patch+json, application/apply-patch+yaml',
    );
  });
});
