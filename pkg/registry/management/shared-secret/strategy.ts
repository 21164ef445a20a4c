// SharedSecret: data keys follow Kubernetes' Secret key rules (apimachinery
// IsConfigMapKey) with the same messages; values must be base64, which the schema's
// `byte` format checks without echoing the value back (it is a secret).

import { invalid, tooLong, type FieldError } from '../../../apis/meta/field-errors.js';
import { isObject, type KubeObject } from '../../../apis/meta/types.js';
import { sharedSecretInfo, sharedSecretSchema } from '../../../apis/management/v1/shared-secret.js';
import type { RequestContext, Strategy, TableColumn } from '../../rest/interfaces.js';
import {
  DISPLAY_NAME_COLUMN,
  dropStatus,
  keepStoredStatus,
  specOf,
  specPath,
  validateAccessRules,
  validateOwner,
} from '../common.js';

const CONFIG_KEY = /^[-._a-zA-Z0-9]+$/;
const CONFIG_KEY_MAX_LENGTH = 253;
/** Kubernetes' MaxSecretSize: the decoded data of one secret. */
export const MAX_SECRET_SIZE = 1024 * 1024;

const CONFIG_KEY_MESSAGE =
  "a valid config key must consist of alphanumeric characters, '-', '_' or '.' (e.g. 'key.name',  or 'KEY_NAME',  or 'key-name', regex used for validation is '[-._a-zA-Z0-9]+')";

/** The problems with a data key, in IsConfigMapKey's words. */
export function configKeyErrors(key: string): string[] {
  const errs: string[] = [];
  if (key.length > CONFIG_KEY_MAX_LENGTH)
    errs.push(`must be no more than ${CONFIG_KEY_MAX_LENGTH} characters`);
  if (!CONFIG_KEY.test(key)) errs.push(CONFIG_KEY_MESSAGE);
  if (key === '.') errs.push("must not be '.'");
  else if (key === '..') errs.push("must not be '..'");
  else if (key.startsWith('..')) errs.push("must not start with '..'");
  return errs;
}

/** Bytes a base64 string decodes to (0 for values the schema will reject anyway). */
function decodedLength(value: unknown): number {
  return typeof value === 'string' ? Buffer.byteLength(value, 'base64') : 0;
}

function validateSharedSecret(obj: KubeObject): FieldError[] {
  const spec = specOf(obj);
  const path = specPath();
  const errs: FieldError[] = [];
  const data = spec['data'];
  if (isObject(data)) {
    const dataPath = path.child('data');
    let total = 0;
    for (const [key, value] of Object.entries(data)) {
      for (const msg of configKeyErrors(key)) errs.push(invalid(dataPath.key(key), key, msg));
      total += decodedLength(value);
    }
    if (total > MAX_SECRET_SIZE) errs.push(tooLong(dataPath, MAX_SECRET_SIZE));
  }
  errs.push(...validateOwner(spec['owner'], path.child('owner')));
  errs.push(...validateAccessRules(spec['access'], path.child('access')));
  return errs;
}

const KEYS_COLUMN: TableColumn = {
  definition: { name: 'Keys', type: 'integer', format: '', description: 'Number of data keys.', priority: 0 },
  cell: (obj) => {
    const data = specOf(obj)['data'];
    return isObject(data) ? Object.keys(data).length : 0;
  },
};

export function sharedSecretStrategy(group: string): Strategy {
  return {
    info: sharedSecretInfo(group),
    schema: sharedSecretSchema(),
    // status has its own subresource: only writes through it change it.
    status: {},
    prepareForCreate(_ctx: RequestContext, obj: KubeObject): void {
      dropStatus(obj);
    },
    prepareForUpdate(_ctx: RequestContext, obj: KubeObject, old: KubeObject): void {
      keepStoredStatus(obj, old);
    },
    validate: (_ctx, obj) => validateSharedSecret(obj),
    validateUpdate: (_ctx, obj) => validateSharedSecret(obj),
    tableColumns: [DISPLAY_NAME_COLUMN, KEYS_COLUMN],
  };
}
