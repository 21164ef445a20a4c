import { test } from 'node:test';
import assert from 'node:assert/strict';
import { fieldErrorString } from '../apis/meta/field-errors.js';
import { DEFAULT_SECRET_NAME, parseConnectionSettings } from './settings.js';

test('external.platform: {} is dedicated-key mode with every default', () => {
  const { settings, errors } = parseConnectionSettings('external:\n  platform: {}\n');
  assert.deepEqual(errors, []);
  assert.equal(settings.connected, true);
  assert.equal(settings.mode, 'dedicated');
  assert.equal(settings.apiKey.secretName, DEFAULT_SECRET_NAME);
  assert.equal(settings.apiKey.namespace, undefined);
  assert.equal(settings.apiKey.createRBAC, true);
});

test('an empty `platform:` means the same as {}', () => {
  const { settings, errors } = parseConnectionSettings('external:\n  platform:\n');
  assert.deepEqual(errors, []);
  assert.equal(settings.connected, true);
  assert.equal(settings.mode, 'dedicated');
});

test('apiKey naming a secret in another namespace is shared mode, with createRBAC kept', () => {
  const { settings, errors } = parseConnectionSettings(`
external:
  platform:
    project: team-a
    apiKey:
      secretName: shared-key
      namespace: vc-platform
      createRBAC: false
`);
  assert.deepEqual(errors, []);
  assert.equal(settings.mode, 'shared');
  assert.equal(settings.project, 'team-a');
  assert.deepEqual(settings.apiKey, {
    secretName: 'shared-key',
    namespace: 'vc-platform',
    createRBAC: false,
    explicit: true,
  });
});

test('a file without external.platform is not connected', () => {
  const { settings, errors } = parseConnectionSettings('controlPlane:\n  distro: k8s\n');
  assert.deepEqual(errors, []);
  assert.equal(settings.connected, false);
  assert.equal(parseConnectionSettings('').settings.connected, false);
});

test('wrong types and names are field errors with their paths, not exceptions', () => {
  const { errors } = parseConnectionSettings(`
external:
  platform:
    apiKey:
      secretName: Not_A_Name
      namespace: 7
      createRBAC: "yes"
`);
  const text = errors.map(fieldErrorString);
  assert.equal(text.length, 3);
  assert.match(text[0] ?? '', /^external\.platform\.apiKey\.secretName: Invalid value: "Not_A_Name"/);
  assert.match(text[1] ?? '', /^external\.platform\.apiKey\.namespace: Invalid value: 7: must be a string/);
  assert.match(
    text[2] ?? '',
    /^external\.platform\.apiKey\.createRBAC: Invalid value: "yes": must be true or false/,
  );
});

test('a file that is not YAML is one error, not a throw', () => {
  const { errors } = parseConnectionSettings('external: [unclosed\n');
  assert.equal(errors.length, 1);
  assert.match(fieldErrorString(errors[0] ?? { type: 'InternalError', field: '' }), /not valid YAML/);
});

test('external.platform that is not a mapping says how to write dedicated mode', () => {
  const { errors } = parseConnectionSettings('external:\n  platform: true\n');
  assert.match(
    fieldErrorString(errors[0] ?? { type: 'InternalError', field: '' }),
    /use \{\} for dedicated-key mode/,
  );
});
