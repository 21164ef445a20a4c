// What the server logs (kube-apiserver's logs options: -v, here a level name).

import { isLogLevel, LOG_LEVELS } from '../../util/log/index.js';
import type { OptionGroup } from './option-group.js';

export interface LoggingOptionValues {
  logLevel: string;
}

export const loggingOptions = {
  title: 'Logging flags',
  flags: [
    {
      name: 'log-level',
      field: 'logLevel',
      kind: 'string',
      usage:
        'Least severe level logged: debug, info, warn or error. Logs are JSON lines on stdout. One line per request (method, path, user, code, duration) is logged at `debug`, as kube-apiserver logs requests only from `-v=3`; the audit log is the record of requests.',
      default: 'info',
    },
  ],
  complete(v) {
    v.logLevel = v.logLevel.trim().toLowerCase();
  },
  validate(v) {
    return isLogLevel(v.logLevel)
      ? []
      : [`--log-level: unknown level "${v.logLevel}" (supported: ${LOG_LEVELS.join(', ')})`];
  },
} satisfies OptionGroup<LoggingOptionValues>;
