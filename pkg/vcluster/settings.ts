// A virtual cluster's platform connection settings, read from its configuration
// file (YAML): `external.platform.apiKey` with the specification's defaults. The
// reader validates and returns FieldErrors, because a typo in this file otherwise
// surfaces much later as an opaque "cannot connect" inside the virtual cluster.

import { parseDocument } from 'yaml';
import type { FieldError } from '../apis/meta/field-errors.js';
import { FieldPath, invalid, typeInvalid } from '../apis/meta/field-errors.js';
import { isObject } from '../apis/meta/types.js';
import { isDNS1123Label, isDNS1123Subdomain } from '../apis/meta/validation.js';

/** The secret a virtual cluster looks for when its settings name none. */
export const DEFAULT_SECRET_NAME = 'vc-platform-api-key';
/** Where the specification recommends keeping one secret shared by many virtual clusters. */
export const RECOMMENDED_SHARED_NAMESPACE = 'vc-platform';

export interface ApiKeySettings {
  /** Default DEFAULT_SECRET_NAME. */
  readonly secretName: string;
  /** Undefined: the virtual cluster's own namespace. */
  readonly namespace: string | undefined;
  /** Default true. */
  readonly createRBAC: boolean;
  /** True when the file set secretName or namespace itself (so lookup step 2 is its own place). */
  readonly explicit: boolean;
}

/**
 * `dedicated`: `external.platform` carries no apiKey settings (`{}`): the virtual
 * cluster has its own key in its own namespace. `shared`: apiKey names a secret or a
 * namespace, typically one secret in `vc-platform` used by many virtual clusters.
 */
export type ConnectionMode = 'dedicated' | 'shared';

export interface ConnectionSettings {
  /** False when the file has no `external.platform` at all: the virtual cluster is not connected. */
  readonly connected: boolean;
  readonly mode: ConnectionMode;
  readonly apiKey: ApiKeySettings;
  /** `external.platform.project`, when the file names the project the virtual cluster belongs to. */
  readonly project: string | undefined;
}

export const DEFAULT_SETTINGS: ConnectionSettings = {
  connected: false,
  mode: 'dedicated',
  apiKey: { secretName: DEFAULT_SECRET_NAME, namespace: undefined, createRBAC: true, explicit: false },
  project: undefined,
};

export interface SettingsResult {
  readonly settings: ConnectionSettings;
  readonly errors: FieldError[];
}

// A namespace (and a project, a namespace's suffix) is a DNS-1123 label; a Secret's
// name is a subdomain. The limit goes in the message because it is the one a user misses.
const DNS_LABEL = { validate: isDNS1123Label, maxLength: 63 };
const DNS_SUBDOMAIN = { validate: isDNS1123Subdomain, maxLength: 253 };

function optionalString(
  value: unknown,
  path: FieldPath,
  rule: { validate: (value: string) => string[]; maxLength: number },
  errors: FieldError[],
): string | undefined {
  if (value === undefined || value === null || value === '') return undefined;
  if (typeof value !== 'string') {
    errors.push(typeInvalid(path, value, 'must be a string'));
    return undefined;
  }
  if (rule.validate(value).length > 0) {
    errors.push(invalid(path, value, `must be a lower-case DNS name of at most ${rule.maxLength} characters`));
    return undefined;
  }
  return value;
}

/** The settings from an already parsed configuration document. */
export function connectionSettingsFrom(config: unknown): SettingsResult {
  const errors: FieldError[] = [];
  const root = FieldPath.root('');
  if (config === undefined || config === null) return { settings: DEFAULT_SETTINGS, errors };
  if (!isObject(config)) {
    errors.push(typeInvalid(root, config, 'the configuration must be a YAML mapping'));
    return { settings: DEFAULT_SETTINGS, errors };
  }
  const externalPath = root.child('external');
  const external = config.external;
  if (external === undefined || external === null) return { settings: DEFAULT_SETTINGS, errors };
  if (!isObject(external)) {
    errors.push(typeInvalid(externalPath, external, 'must be a mapping'));
    return { settings: DEFAULT_SETTINGS, errors };
  }
  const platformPath = externalPath.child('platform');
  const platform = external.platform;
  if (platform === undefined) return { settings: DEFAULT_SETTINGS, errors };
  // `platform:` with nothing after it parses as null: the same intent as `{}`.
  if (platform !== null && !isObject(platform)) {
    errors.push(typeInvalid(platformPath, platform, 'must be a mapping (use {} for dedicated-key mode)'));
    return { settings: DEFAULT_SETTINGS, errors };
  }
  const platformObj = platform ?? {};
  const project = optionalString(platformObj.project, platformPath.child('project'), DNS_LABEL, errors);

  const apiKeyPath = platformPath.child('apiKey');
  const apiKey = platformObj.apiKey;
  let secretName: string | undefined;
  let namespace: string | undefined;
  let createRBAC = true;
  if (apiKey !== undefined && apiKey !== null) {
    if (!isObject(apiKey)) {
      errors.push(typeInvalid(apiKeyPath, apiKey, 'must be a mapping'));
    } else {
      secretName = optionalString(
        apiKey.secretName,
        apiKeyPath.child('secretName'),
        DNS_SUBDOMAIN,
        errors,
      );
      namespace = optionalString(apiKey.namespace, apiKeyPath.child('namespace'), DNS_LABEL, errors);
      if (apiKey.createRBAC !== undefined && apiKey.createRBAC !== null) {
        if (typeof apiKey.createRBAC === 'boolean') createRBAC = apiKey.createRBAC;
        else
          errors.push(
            typeInvalid(apiKeyPath.child('createRBAC'), apiKey.createRBAC, 'must be true or false'),
          );
      }
    }
  }
  const explicit = secretName !== undefined || namespace !== undefined;
  return {
    settings: {
      connected: true,
      mode: explicit ? 'shared' : 'dedicated',
      apiKey: { secretName: secretName ?? DEFAULT_SECRET_NAME, namespace, createRBAC, explicit },
      project,
    },
    errors,
  };
}

/** The settings from the text of a virtual cluster's configuration file. */
export function parseConnectionSettings(yamlText: string): SettingsResult {
  const doc = parseDocument(yamlText, { prettyErrors: false });
  if (doc.errors.length > 0) {
    const first = doc.errors[0];
    return {
      settings: DEFAULT_SETTINGS,
      errors: [
        invalid(FieldPath.root(''), '', `not valid YAML: ${first?.message.split('\n')[0] ?? 'parse error'}`),
      ],
    };
  }
  return connectionSettingsFrom(doc.toJS({ maxAliasCount: 100 }));
}
