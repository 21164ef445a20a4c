// Where a virtual cluster finds its platform access key and host, in the
// specification's order:
//   1. the environment variable LICENSE (the key; the host comes with it in
//      PLATFORM_HOST, since one variable cannot carry both);
//   2. the secret named by external.platform.apiKey.secretName, in apiKey.namespace
//      or the virtual cluster's own namespace;
//   3. the secret vc-platform-api-key in the virtual cluster's namespace.
// The first place that has a key wins. When none has one, the error names every
// place looked at and what was wrong with it, because "no key found" alone sends
// people guessing which namespace was meant.

import type { ConnectionValues } from './connection-secret.js';
import { connectionValuesOf } from './connection-secret.js';
import type { ConnectionHost } from './host.js';
import { HostForbiddenError } from './host.js';
import type { ConnectionSettings } from './settings.js';
import { DEFAULT_SECRET_NAME } from './settings.js';

export const LICENSE_ENV = 'LICENSE';
export const HOST_ENV = 'PLATFORM_HOST';

export type KeySource =
  | { readonly kind: 'env'; readonly variable: string }
  | {
      readonly kind: 'secret';
      readonly namespace: string;
      readonly name: string;
      /** Which lookup step found it: the configured secret, or the default one. */
      readonly step: 'configured' | 'default';
    };

export interface ResolvedConnection extends ConnectionValues {
  readonly source: KeySource;
  /** Every place looked at before (and including) the one that answered, in order. */
  readonly lookedAt: readonly string[];
}

/** Nothing had a usable key; `places` says what each place held. */
export class KeyNotFoundError extends Error {
  override readonly name = 'KeyNotFoundError';
  constructor(
    readonly virtualCluster: string,
    readonly places: readonly string[],
  ) {
    super(
      `no platform access key found for virtual cluster ${virtualCluster}; looked at: ${places.join('; ')}`,
    );
  }
}

/** A place had part of what is needed (LICENSE without PLATFORM_HOST): a mistake, not an absence. */
export class IncompleteSourceError extends Error {
  override readonly name = 'IncompleteSourceError';
}

export function describeSource(source: KeySource): string {
  if (source.kind === 'env') return `environment variable ${source.variable}`;
  const why = source.step === 'configured' ? 'external.platform.apiKey' : 'default';
  return `secret ${source.namespace}/${source.name} (${why})`;
}

export interface LookupInput {
  readonly settings: ConnectionSettings;
  /** The virtual cluster's name and host namespace. */
  readonly virtualCluster: { readonly name: string; readonly namespace: string };
  readonly env: Readonly<Record<string, string | undefined>>;
  readonly host: ConnectionHost;
}

export async function resolveConnection(input: LookupInput): Promise<ResolvedConnection> {
  const { settings, virtualCluster: vc, env, host } = input;
  const lookedAt: string[] = [];

  const license = env[LICENSE_ENV]?.trim();
  if (license) {
    const platformHost = env[HOST_ENV]?.trim();
    if (!platformHost) {
      throw new IncompleteSourceError(
        `the environment variable ${LICENSE_ENV} holds an access key but ${HOST_ENV} is empty: set ${HOST_ENV} to the platform's host`,
      );
    }
    const source: KeySource = { kind: 'env', variable: LICENSE_ENV };
    lookedAt.push(describeSource(source));
    return { accessKey: license, host: platformHost, source, lookedAt };
  }
  lookedAt.push(`environment variable ${LICENSE_ENV}: not set`);

  const places: Array<Extract<KeySource, { kind: 'secret' }>> = [];
  if (settings.apiKey.explicit) {
    places.push({
      kind: 'secret',
      namespace: settings.apiKey.namespace ?? vc.namespace,
      name: settings.apiKey.secretName,
      step: 'configured',
    });
  }
  const fallback = {
    kind: 'secret',
    namespace: vc.namespace,
    name: DEFAULT_SECRET_NAME,
    step: 'default',
  } as const;
  // Step 2 with the defaults is step 3: look there once.
  if (!places.some((p) => p.namespace === fallback.namespace && p.name === fallback.name))
    places.push(fallback);

  for (const place of places) {
    const label = describeSource(place);
    let data: Record<string, string> | undefined;
    try {
      data = await host.readSecret(place.namespace, place.name);
    } catch (err) {
      if (err instanceof HostForbiddenError) {
        lookedAt.push(`${label}: not allowed to read it (${err.message})`);
        continue;
      }
      throw err;
    }
    if (data === undefined) {
      lookedAt.push(`${label}: not found`);
      continue;
    }
    const parsed = connectionValuesOf(data);
    if ('missing' in parsed) {
      lookedAt.push(`${label}: has no ${parsed.missing.join(' or ')} key`);
      continue;
    }
    lookedAt.push(label);
    return { ...parsed.values, source: place, lookedAt };
  }
  throw new KeyNotFoundError(`${vc.namespace}/${vc.name}`, lookedAt);
}
