// Where the front-proxy (request-header) settings come from: the
// --requestheader-* flags, or the host's kube-system/extension-apiserver-authentication
// ConfigMap, which kube-apiserver keeps current and which is watched so a rotated
// front-proxy CA takes effect at once. Flags that name headers or allowed names
// override the ConfigMap's values; --requestheader-client-ca-file makes the flags
// the whole source (the ConfigMap is then not read), as in k8s.io/apiserver's
// DelegatingAuthenticationOptions.

import type { X509Certificate } from 'node:crypto';
import type { HostCluster, HostConfigMap, WatchHandle } from '../hostcluster/types.js';
import { compileCaBundle } from './ca-bundle.js';
import { CaFile } from './ca-file.js';
import type { Logger } from '../util/log/index.js';

export const AUTHENTICATION_CONFIGMAP_NAMESPACE = 'kube-system';
export const AUTHENTICATION_CONFIGMAP_NAME = 'extension-apiserver-authentication';

export const DEFAULT_USERNAME_HEADERS = ['X-Remote-User'];
export const DEFAULT_GROUP_HEADERS = ['X-Remote-Group'];
export const DEFAULT_EXTRA_HEADER_PREFIXES = ['X-Remote-Extra-'];

export interface RequestHeaderSettings {
  /** PEM bundle of the CAs that sign the front proxy's client certificate. */
  readonly caPem: string;
  /** Common names the front proxy's certificate may have; empty allows any the CA signed. */
  readonly allowedNames: readonly string[];
  readonly usernameHeaders: readonly string[];
  readonly groupHeaders: readonly string[];
  readonly extraHeaderPrefixes: readonly string[];
  readonly uidHeaders: readonly string[];
}

/** Settings ready for use: CAs parsed, header names lower-cased as Node presents them. */
export interface RequestHeaderConfig {
  readonly roots: readonly X509Certificate[];
  readonly allowedNames: readonly string[];
  readonly usernameHeaders: readonly string[];
  readonly groupHeaders: readonly string[];
  readonly extraHeaderPrefixes: readonly string[];
  readonly uidHeaders: readonly string[];
  /** Changes whenever the settings do (for per-connection caches). */
  readonly generation: number;
}

/** Flag values; an empty list means "not given". */
export interface RequestHeaderFlags {
  readonly clientCaFile: string;
  readonly allowedNames: readonly string[];
  readonly usernameHeaders: readonly string[];
  readonly groupHeaders: readonly string[];
  readonly extraHeaderPrefixes: readonly string[];
  readonly uidHeaders?: readonly string[];
}

export interface RequestHeaderConfigSource {
  /** The settings in force, or undefined when front-proxy authentication is off. */
  current(): RequestHeaderConfig | undefined;
}

/** The header names and allowed names, ready for use (header names lower-cased as Node presents them). */
function compileHeaders(
  settings: Omit<RequestHeaderSettings, 'caPem'>,
): Omit<RequestHeaderConfig, 'roots' | 'generation'> {
  const lower = (names: readonly string[]): string[] =>
    names.map((n) => n.trim().toLowerCase()).filter((n) => n !== '');
  return {
    allowedNames: settings.allowedNames.filter((n) => n !== ''),
    usernameHeaders: lower(settings.usernameHeaders),
    groupHeaders: lower(settings.groupHeaders),
    extraHeaderPrefixes: lower(settings.extraHeaderPrefixes),
    uidHeaders: lower(settings.uidHeaders),
  };
}

export function compileSettings(settings: RequestHeaderSettings): RequestHeaderConfig {
  return { ...compileHeaders(settings), ...compileCaBundle(settings.caPem) };
}

function orDefault(given: readonly string[] | undefined, fallback: readonly string[]): readonly string[] {
  return given && given.length > 0 ? given : fallback;
}

/**
 * Settings from the flags alone (--requestheader-client-ca-file given). The CA file
 * is read again when it changes (start() watches it), so a rotated front-proxy CA
 * takes effect without a restart.
 */
export class StaticRequestHeaderSource implements RequestHeaderConfigSource {
  readonly caFile: CaFile;
  private config: RequestHeaderConfig;

  constructor(flags: RequestHeaderFlags, options: { logger?: Logger; pollIntervalMs?: number } = {}) {
    this.caFile = new CaFile(flags.clientCaFile, { flag: '--requestheader-client-ca-file', ...options });
    const bundle = this.caFile.current();
    this.config = {
      ...compileHeaders({
        allowedNames: flags.allowedNames,
        usernameHeaders: orDefault(flags.usernameHeaders, DEFAULT_USERNAME_HEADERS),
        groupHeaders: orDefault(flags.groupHeaders, DEFAULT_GROUP_HEADERS),
        extraHeaderPrefixes: orDefault(flags.extraHeaderPrefixes, DEFAULT_EXTRA_HEADER_PREFIXES),
        uidHeaders: flags.uidHeaders ?? [],
      }),
      roots: bundle.roots,
      generation: bundle.generation,
    };
  }

  current(): RequestHeaderConfig {
    const bundle = this.caFile.current();
    if (bundle.generation !== this.config.generation)
      this.config = { ...this.config, roots: bundle.roots, generation: bundle.generation };
    return this.config;
  }

  start(): void {
    this.caFile.start();
  }

  stop(): void {
    this.caFile.stop();
  }
}

/** A ConfigMap list value: a JSON array of strings (kube-apiserver writes them so). */
function jsonList(data: Readonly<Record<string, string>>, key: string): string[] {
  const raw = data[key];
  if (raw === undefined || raw.trim() === '') return [];
  const parsed = JSON.parse(raw) as unknown;
  if (!Array.isArray(parsed) || !parsed.every((v) => typeof v === 'string'))
    throw new Error(`${key} is not a JSON array of strings`);
  return parsed;
}

/**
 * The request-header settings a ConfigMap publishes, with flag overrides; undefined
 * when it has no requestheader-client-ca-file (the cluster has no front proxy).
 * Throws when a value is malformed.
 */
export function settingsFromConfigMap(
  data: Readonly<Record<string, string>>,
  overrides: Partial<RequestHeaderFlags> = {},
): RequestHeaderSettings | undefined {
  const caPem = data['requestheader-client-ca-file'];
  if (caPem === undefined || caPem.trim() === '') return undefined;
  const pick = (
    flag: readonly string[] | undefined,
    key: string,
    fallback: readonly string[],
  ): readonly string[] => (flag && flag.length > 0 ? flag : orDefault(jsonList(data, key), fallback));
  return {
    caPem,
    allowedNames:
      overrides.allowedNames && overrides.allowedNames.length > 0
        ? overrides.allowedNames
        : jsonList(data, 'requestheader-allowed-names'),
    usernameHeaders: pick(
      overrides.usernameHeaders,
      'requestheader-username-headers',
      DEFAULT_USERNAME_HEADERS,
    ),
    groupHeaders: pick(overrides.groupHeaders, 'requestheader-group-headers', DEFAULT_GROUP_HEADERS),
    extraHeaderPrefixes: pick(
      overrides.extraHeaderPrefixes,
      'requestheader-extra-headers-prefix',
      DEFAULT_EXTRA_HEADER_PREFIXES,
    ),
    uidHeaders: pick(overrides.uidHeaders, 'requestheader-uid-headers', []),
  };
}

/** Watches the host's authentication ConfigMap; errors are logged as `<what>: ...` and retried. */
export function watchAuthenticationConfigMap(
  host: Pick<HostCluster, 'watchConfigMap'>,
  apply: (cm: HostConfigMap | undefined) => void,
  logger: Logger,
  what: string,
): WatchHandle {
  return host.watchConfigMap(AUTHENTICATION_CONFIGMAP_NAMESPACE, AUTHENTICATION_CONFIGMAP_NAME, apply, {
    onError: (err) =>
      logger.warn(`${what}: cannot read the host authentication ConfigMap; retrying`, {
        configMap: `${AUTHENTICATION_CONFIGMAP_NAMESPACE}/${AUTHENTICATION_CONFIGMAP_NAME}`,
        error: err.message,
      }),
  });
}

/** Settings from the host's ConfigMap, kept current by a watch. */
export class ConfigMapRequestHeaderSource implements RequestHeaderConfigSource {
  private config: RequestHeaderConfig | undefined;
  private handle: WatchHandle | undefined;
  private synced = false;
  private readonly syncWaiters: (() => void)[] = [];

  constructor(
    private readonly host: Pick<HostCluster, 'watchConfigMap'>,
    private readonly overrides: Partial<RequestHeaderFlags>,
    private readonly logger: Logger,
  ) {}

  /** The ConfigMap has been read at least once (present or not). */
  get hasSynced(): boolean {
    return this.synced;
  }

  current(): RequestHeaderConfig | undefined {
    return this.config;
  }

  start(): void {
    if (this.handle) return;
    this.handle = watchAuthenticationConfigMap(this.host, (cm) => this.apply(cm), this.logger, 'front-proxy');
  }

  async stop(): Promise<void> {
    const handle = this.handle;
    this.handle = undefined;
    await handle?.stop();
  }

  /** Resolves true once synced, false after `timeoutMs`. */
  waitForSync(timeoutMs: number): Promise<boolean> {
    if (this.synced) return Promise.resolve(true);
    return new Promise((resolve) => {
      const timer = setTimeout(() => resolve(false), timeoutMs);
      this.syncWaiters.push(() => {
        clearTimeout(timer);
        resolve(true);
      });
    });
  }

  /** Applies one state of the ConfigMap (exposed for tests of the parsing rules). */
  apply(cm: HostConfigMap | undefined): void {
    const where = `${AUTHENTICATION_CONFIGMAP_NAMESPACE}/${AUTHENTICATION_CONFIGMAP_NAME}`;
    try {
      const settings = cm ? settingsFromConfigMap(cm.data, this.overrides) : undefined;
      if (!settings) {
        if (this.config || !this.synced)
          this.logger.warn(
            'front-proxy: the host publishes no requestheader-client-ca-file; front-proxy authentication is off',
            {
              configMap: where,
            },
          );
        this.config = undefined;
      } else {
        this.config = compileSettings(settings);
        this.logger.info('front-proxy: loaded request-header settings from the host', {
          configMap: where,
          resourceVersion: cm?.metadata.resourceVersion,
          allowedNames: settings.allowedNames,
          certificateAuthorities: this.config.roots.map((r) => r.subject.replace(/\n/g, ',')),
        });
      }
    } catch (err) {
      // Keep what worked: a malformed update must not switch front-proxy authentication off.
      this.logger.error(
        'front-proxy: the host authentication ConfigMap is malformed; keeping the previous settings',
        {
          configMap: where,
          error: (err as Error).message,
        },
      );
    }
    if (!this.synced) {
      this.synced = true;
      for (const wake of this.syncWaiters.splice(0)) wake();
    }
  }
}
