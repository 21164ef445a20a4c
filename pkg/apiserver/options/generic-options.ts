// Where the server keeps its files and which API group it serves: the settings
// every other part reads (kube-apiserver's GenericServerRunOptions).

import { resolve } from 'node:path';
import type { OptionGroup } from './option-group.js';
import { isSubdomain, statOrUndefined } from './validation.js';

export interface GenericOptionValues {
  dataDir: string;
  apiGroup: string;
}

export const genericOptions = {
  title: 'Generic flags',
  flags: [
    {
      name: 'data-dir',
      field: 'dataDir',
      kind: 'string',
      usage: 'Directory for the embedded database, generated certificates and the admin kube config.',
      default: './data',
    },
    {
      name: 'api-group',
      field: 'apiGroup',
      kind: 'string',
      usage: 'The API group served (a DNS subdomain with at least one dot).',
      default: 'management.platform.dev',
    },
  ],
  complete(v) {
    v.dataDir = v.dataDir.trim() === '' ? '' : resolve(v.dataDir);
    v.apiGroup = v.apiGroup.trim();
  },
  validate(v) {
    const errs: string[] = [];
    if (v.dataDir === '') errs.push('--data-dir: must not be empty');
    else {
      const st = statOrUndefined(v.dataDir);
      if (st && !st.isDirectory()) errs.push(`--data-dir: "${v.dataDir}" exists and is not a directory`);
    }
    if (!isSubdomain(v.apiGroup) || !v.apiGroup.includes('.')) {
      errs.push(
        `--api-group: "${v.apiGroup}" must be a DNS subdomain with at least one dot (lower case letters, digits, '-' and '.', e.g. management.example.com)`,
      );
    }
    return errs;
  },
} satisfies OptionGroup<GenericOptionValues>;
