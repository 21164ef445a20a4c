// Loading an EncryptionConfiguration: upstream's validation messages (secrets
// redacted), resource matching (exact, *.<group>, *.*), and the providers in order.

import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { describe, it } from 'node:test';
import { EncryptionConfigError, parseEncryptionConfiguration, ResourceTransformers } from './encryption-config.js';
import { IDENTITY } from './identity.js';

const parseDuration = (t: string): number | undefined => (/^\d+s$/.test(t) ? Number(t.slice(0, -1)) * 1000 : undefined);
const b64 = (n: number): string => randomBytes(n).toString('base64');

function load(yaml: string): ResourceTransformers {
  return new ResourceTransformers(parseEncryptionConfiguration(yaml, 'enc.yaml', parseDuration));
}

function problems(yaml: string): string {
  try {
    parseEncryptionConfiguration(yaml, 'enc.yaml', parseDuration);
  } catch (err) {
    assert.ok(err instanceof EncryptionConfigError);
    return err.message;
  }
  assert.fail('the configuration was accepted');
}

const header = 'apiVersion: apiserver.config.k8s.io/v1\nkind: EncryptionConfiguration\n';
const GROUP = 'management.platform.dev';
const KEY = Buffer.from('/registry/x');

describe('EncryptionConfiguration', () => {
  it('matches the exact resource before *.<group> before *.*, and leaves the rest plain', async () => {
    const config = load(`${header}resources:
  - resources: [sharedsecrets.${GROUP}]
    providers: [{aesgcm: {keys: [{name: k1, secret: "${b64(32)}"}]}}]
  - resources: ["*.${GROUP}"]
    providers: [{secretbox: {keys: [{name: k2, secret: "${b64(32)}"}]}}]
  - resources: ["*.*"]
    providers: [{aescbc: {keys: [{name: k3, secret: "${b64(32)}"}]}}]
`);
    const prefixOf = async (group: string, resource: string): Promise<string> =>
      (await config.transformerFor(group, resource).transformToStorage(Buffer.from('{}'), KEY)).subarray(0, 26).toString('latin1');
    assert.match(await prefixOf(GROUP, 'sharedsecrets'), /^k8s:enc:aesgcm:v1:k1:/);
    assert.match(await prefixOf(GROUP, 'teams'), /^k8s:enc:secretbox:v1:k2/);
    assert.match(await prefixOf('other.group', 'things'), /^k8s:enc:aescbc:v1:k3:/);
    const plain = load(`${header}resources:\n  - resources: [sharedsecrets.${GROUP}]\n    providers: [{identity: {}}]\n`);
    assert.equal(plain.transformerFor(GROUP, 'teams'), IDENTITY);
  });

  it("reports upstream's messages, every problem at once, never a secret", () => {
    const secret = b64(20);
    const message = problems(`${header}resources:
  - resources: [Secrets, "*", "*.${GROUP}", "teams.${GROUP}"]
    providers:
      - aesgcm: {keys: [{name: a, secret: "${secret}"}]}
      - secretbox: {keys: [{name: "", secret: "not base64!"}]}
      - {}
      - {identity: {}, aescbc: {keys: [{name: b, secret: "${b64(32)}"}]}}
      - kms: {apiVersion: v2, name: "x:y", endpoint: "tcp://127.0.0.1:1", cachesize: 100}
`);
    assert.ok(!message.includes(secret));
    for (const expected of [
      'resources[0].resources[0]: Invalid value: "Secrets": resource name should not contain capital letters',
      `resources[0].resources[1]: Invalid value: "*": use '*.' to encrypt all the resources from core API group or *.* to encrypt all resources`,
      "using overlapping resources such as 'secrets' and '*.' in the same resource list is not allowed as they will be masked",
      'resources[0].providers[0].aesgcm.keys[0].secret: Invalid value: "REDACTED": secret is not of the expected length, got 20, expected one of [16 24 32]',
      'resources[0].providers[1].secretbox.keys[0].name: Required value: name is a mandatory field for a key',
      'resources[0].providers[1].secretbox.keys[0].secret: Invalid value: "REDACTED": secrets must be base64 encoded',
      'provider does not contain any of the expected providers: KMS, AESGCM, AESCBC, Secretbox, Identity',
      'more than one provider specified in a single element, should split into different list elements',
      "invalid KMS provider name x:y, must not contain ':'",
      'unsupported scheme "tcp" for KMS provider, only unix is supported',
      'resources[0].providers[4].kms.cachesize: Invalid value: 100: cachesize is not supported in v2',
    ]) {
      assert.ok(message.includes(expected), `missing: ${expected}\nin: ${message}`);
    }
  });

  it('refuses an empty file, another kind and no resources', () => {
    assert.match(problems(''), /encryption provider config file "enc.yaml" is empty/);
    assert.match(problems('apiVersion: v1\nkind: ConfigMap\n'), /no kind "ConfigMap" is registered for version "v1"/);
    assert.match(problems(`${header}resources: []\n`), /resources: Required value: at least one resources is required/);
  });
});
