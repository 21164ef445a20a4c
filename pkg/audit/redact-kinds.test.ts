// The audit layer sits below the kinds, so it redacts by a list of its own
// (SECRET_POINTERS). This test keeps the two in step: a kind that declares a secret
// field the audit's list does not cover would have that field's values written into
// the audit log in clear.

import assert from 'node:assert/strict';
import { test } from 'node:test';

import { sensitiveFieldsByResource } from '../registry/management/kinds.js';
import { SECRET_POINTERS } from './redact.js';

test("every kind's secret fields are redacted in audit events", () => {
  const declared = sensitiveFieldsByResource('management.platform.dev');
  assert.ok(declared.size > 0, 'some kind declares a secret field');
  for (const [resource, fields] of declared) {
    for (const field of fields) {
      const pointer = `/${field.split('.').join('/')}`;
      assert.ok(
        SECRET_POINTERS.includes(pointer),
        `${resource} declares ${field} secret, but the audit's SECRET_POINTERS lack ${pointer}`,
      );
    }
  }
});
