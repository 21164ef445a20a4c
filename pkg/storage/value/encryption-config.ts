// kube-apiserver's EncryptionConfiguration (apiserver.config.k8s.io/v1), read and
// checked as k8s.io/apiserver pkg/server/options/encryptionconfig and
// apis/apiserver/validation do, with their messages, so an operator's file and
// runbook work here unchanged. Building turns each resources[] entry into one
// PrefixTransformers: its providers in order, one prefix per named key.

import { parse as parseYaml } from 'yaml';
import type { FieldError } from '../../apis/meta/field-errors.js';
import { FieldPath, fieldErrorString, invalid, required } from '../../apis/meta/field-errors.js';
import { isObject } from '../../apis/meta/types.js';
import { AesCbcTransformer, AesGcmTransformer } from './aes.js';
import { IDENTITY } from './identity.js';
import { SecretboxTransformer } from './secretbox.js';
import type { PrefixTransformer, Transformer } from './transformer.js';
import { PrefixTransformers } from './transformer.js';

export const ENCRYPTION_CONFIG_API_VERSION = 'apiserver.config.k8s.io/v1';
export const ENCRYPTION_CONFIG_KIND = 'EncryptionConfiguration';

export interface EncryptionKey {
  readonly name: string;
  /** base64 of the key bytes. */
  readonly secret: string;
}

export interface KMSConfiguration {
  readonly apiVersion: string;
  readonly name: string;
  readonly endpoint: string;
  /** Per-call deadline in ms (default 3s, as upstream). */
  readonly timeoutMs: number;
  /** KMS v1's DEK cache size; refused with v2 (its cache is not sized). */
  readonly cacheSize?: unknown;
}

export interface ProviderConfiguration {
  readonly identity?: Record<string, never>;
  readonly aescbc?: { readonly keys: readonly EncryptionKey[] };
  readonly aesgcm?: { readonly keys: readonly EncryptionKey[] };
  readonly secretbox?: { readonly keys: readonly EncryptionKey[] };
  readonly kms?: KMSConfiguration;
}

export interface ResourceConfiguration {
  readonly resources: readonly string[];
  readonly providers: readonly ProviderConfiguration[];
}

export interface EncryptionConfiguration {
  readonly resources: readonly ResourceConfiguration[];
}

/** A group and resource; `*` is a wildcard in either place. */
export interface GroupResource {
  readonly group: string;
  readonly resource: string;
}

const DEFAULT_KMS_TIMEOUT_MS = 3000;
const AES_KEY_SIZES = [16, 24, 32];
const SECRETBOX_KEY_SIZES = [32];

/** schema.ParseGroupResource: the resource is up to the first dot, the group the rest. */
export function parseGroupResource(text: string): GroupResource {
  const dot = text.indexOf('.');
  return dot < 0 ? { group: '', resource: text } : { group: text.slice(dot + 1), resource: text.slice(0, dot) };
}

export class EncryptionConfigError extends Error {
  override readonly name = 'EncryptionConfigError';
}

function asString(value: unknown): string {
  return typeof value === 'string' ? value : '';
}

function asArray(value: unknown): unknown[] {
  return Array.isArray(value) ? value : [];
}

function keysOf(value: unknown): EncryptionKey[] {
  const keys = isObject(value) ? asArray(value.keys) : [];
  return keys.map((k) => (isObject(k) ? { name: asString(k.name), secret: asString(k.secret) } : { name: '', secret: '' }));
}

/**
 * Parses the file's text (YAML or JSON). Throws EncryptionConfigError with upstream's
 * wording for an empty file, another kind, or a value that does not validate. Never
 * puts a key's secret in a message.
 */
export function parseEncryptionConfiguration(
  text: string,
  file: string,
  parseDuration: (text: string) => number | undefined,
): EncryptionConfiguration {
  if (text.trim() === '') throw new EncryptionConfigError(`encryption provider config file "${file}" is empty`);
  let doc: unknown;
  try {
    doc = parseYaml(text);
  } catch (err) {
    const reason = err instanceof Error ? err.message.split('\n')[0] : String(err);
    throw new EncryptionConfigError(`error decoding encryption provider configuration file "${file}": ${reason}`);
  }
  if (!isObject(doc)) throw new EncryptionConfigError(`encryption provider config is empty`);
  if (doc.apiVersion !== ENCRYPTION_CONFIG_API_VERSION || doc.kind !== ENCRYPTION_CONFIG_KIND) {
    throw new EncryptionConfigError(
      `error decoding encryption provider configuration file "${file}": no kind "${asString(doc.kind)}" is registered for version "${asString(doc.apiVersion)}"; expected ${ENCRYPTION_CONFIG_KIND} in ${ENCRYPTION_CONFIG_API_VERSION}`,
    );
  }
  const problems: FieldError[] = [];
  const resources: ResourceConfiguration[] = asArray(doc.resources).map((entry, i) => {
    const r = isObject(entry) ? entry : {};
    const providers = asArray(r.providers).map((p, j): ProviderConfiguration => {
      const provider = isObject(p) ? p : {};
      const out: { -readonly [K in keyof ProviderConfiguration]: ProviderConfiguration[K] } = {};
      if (provider.identity !== undefined) out.identity = {};
      if (provider.aescbc !== undefined) out.aescbc = { keys: keysOf(provider.aescbc) };
      if (provider.aesgcm !== undefined) out.aesgcm = { keys: keysOf(provider.aesgcm) };
      if (provider.secretbox !== undefined) out.secretbox = { keys: keysOf(provider.secretbox) };
      if (provider.kms !== undefined) {
        const kms = isObject(provider.kms) ? provider.kms : {};
        const timeoutText = kms.timeout === undefined ? '' : String(kms.timeout);
        const timeoutMs = timeoutText === '' ? DEFAULT_KMS_TIMEOUT_MS : parseDuration(timeoutText);
        if (timeoutMs === undefined) {
          const path = FieldPath.root('resources').index(i).child('providers').index(j).child('kms', 'timeout');
          problems.push(invalid(path, timeoutText, 'invalid duration'));
        }
        out.kms = {
          // Upstream defaults an unset apiVersion to v1.
          apiVersion: asString(kms.apiVersion) || 'v1',
          name: asString(kms.name),
          endpoint: asString(kms.endpoint),
          timeoutMs: timeoutMs ?? DEFAULT_KMS_TIMEOUT_MS,
          ...(kms.cachesize !== undefined ? { cacheSize: kms.cachesize } : {}),
        };
      }
      return out;
    });
    return { resources: asArray(r.resources).map(asString), providers };
  });
  const config: EncryptionConfiguration = { resources };
  problems.push(...validateEncryptionConfiguration(config));
  if (problems.length > 0) {
    const messages = problems.map(fieldErrorString);
    throw new EncryptionConfigError(
      `error while parsing file "${file}": ${messages.length === 1 ? messages[0] : `[${messages.join(', ')}]`}`,
    );
  }
  return config;
}

/** validation.ValidateEncryptionConfiguration, with its messages. */
export function validateEncryptionConfiguration(config: EncryptionConfiguration): FieldError[] {
  const root = FieldPath.root('resources');
  if (config.resources.length === 0) return [required(root, `at least one ${root} is required`)];
  const errors: FieldError[] = [];
  const kmsNames = new Set<string>();
  config.resources.forEach((conf, i) => {
    const r = root.index(i).child('resources');
    const p = root.index(i).child('providers');
    if (conf.resources.length === 0) errors.push(required(r, `at least one ${r} is required`));
    errors.push(...validateResourceOverlap(conf.resources, r), ...validateResourceNames(conf.resources, r));
    if (conf.providers.length === 0) errors.push(required(p, `at least one ${p} is required`));
    conf.providers.forEach((provider, j) => {
      const path = p.index(j);
      const kinds = (['kms', 'aesgcm', 'aescbc', 'secretbox', 'identity'] as const).filter((k) => provider[k] !== undefined);
      if (kinds.length === 0) {
        errors.push(
          invalid(path, provider, 'provider does not contain any of the expected providers: KMS, AESGCM, AESCBC, Secretbox, Identity'),
        );
        return;
      }
      if (kinds.length > 1) {
        errors.push(
          invalid(path, provider, 'more than one provider specified in a single element, should split into different list elements'),
        );
        return;
      }
      if (provider.kms) {
        errors.push(...validateKMS(provider.kms, path.child('kms'), kmsNames));
        kmsNames.add(provider.kms.name);
      } else if (provider.aesgcm) errors.push(...validateKeys(provider.aesgcm.keys, path.child('aesgcm', 'keys'), AES_KEY_SIZES));
      else if (provider.aescbc) errors.push(...validateKeys(provider.aescbc.keys, path.child('aescbc', 'keys'), AES_KEY_SIZES));
      else if (provider.secretbox)
        errors.push(...validateKeys(provider.secretbox.keys, path.child('secretbox', 'keys'), SECRETBOX_KEY_SIZES));
    });
  });
  return errors;
}

function sameGroupResource(a: GroupResource, b: GroupResource): boolean {
  return a.group === b.group && a.resource === b.resource;
}

function validateResourceOverlap(resources: readonly string[], path: FieldPath): FieldError[] {
  if (resources.length < 2) return [];
  const parsed = resources.map(parseGroupResource);
  let duplicate = false;
  let overlap = false;
  parsed.forEach((r1, i) =>
    parsed.forEach((r2, j) => {
      if (i === j) return;
      if (sameGroupResource(r1, r2)) {
        duplicate = true;
        return;
      }
      if (r1.group === '*' && r1.resource === '*') overlap = true;
      else if (r1.group === r2.group && (r1.resource === '*' || r2.resource === '*')) overlap = true;
    }),
  );
  const errors: FieldError[] = [];
  if (duplicate) errors.push(invalid(path, resources, 'the same resource cannot be specified multiple times'));
  if (overlap) {
    errors.push(
      invalid(path, resources, "using overlapping resources such as 'secrets' and '*.' in the same resource list is not allowed as they will be masked"),
    );
  }
  return errors;
}

function validateResourceNames(resources: readonly string[], path: FieldPath): FieldError[] {
  const errors: FieldError[] = [];
  resources.forEach((res, j) => {
    const at = path.index(j);
    const gr = parseGroupResource(res);
    if (res.toLowerCase() !== res) errors.push(invalid(at, res, 'resource name should not contain capital letters'));
    else if (res === '*')
      errors.push(invalid(at, res, "use '*.' to encrypt all the resources from core API group or *.* to encrypt all resources"));
    else if (gr.group === '*' && gr.resource !== '*')
      errors.push(invalid(at, res, 'encrypting the same resource across groups is not supported'));
  });
  return errors;
}

function validateKeys(keys: readonly EncryptionKey[], path: FieldPath, sizes: readonly number[]): FieldError[] {
  if (keys.length === 0) return [required(path, 'at least one keys is required')];
  const errors: FieldError[] = [];
  keys.forEach((key, i) => {
    const at = path.index(i);
    if (key.name === '') errors.push(required(at.child('name'), 'name is a mandatory field for a key'));
    // The prefix is k8s:enc:<provider>:v1:<name>: and a colon would make it ambiguous.
    else if (key.name.includes(':')) errors.push(invalid(at.child('name'), key.name, "key name must not contain ':'"));
    if (key.secret === '') {
      errors.push(required(at.child('secret'), 'secret is a mandatory field for a key'));
      return;
    }
    const bytes = decodeBase64Strict(key.secret);
    if (bytes === undefined) {
      errors.push(invalid(at.child('secret'), 'REDACTED', 'secrets must be base64 encoded'));
      return;
    }
    if (!sizes.includes(bytes.length)) {
      errors.push(
        invalid(at.child('secret'), 'REDACTED', `secret is not of the expected length, got ${bytes.length}, expected one of [${sizes.join(' ')}]`),
      );
    }
  });
  return errors;
}

function validateKMS(kms: KMSConfiguration, path: FieldPath, names: ReadonlySet<string>): FieldError[] {
  const errors: FieldError[] = [];
  if (kms.name === '') errors.push(required(path.child('name'), 'name is a mandatory field for a provider'));
  if (kms.name.includes(':'))
    errors.push(invalid(path.child('name'), kms.name, `invalid KMS provider name ${kms.name}, must not contain ':'`));
  if (names.has(kms.name))
    errors.push(invalid(path.child('name'), kms.name, `duplicate KMS provider name ${kms.name}, names must be unique`));
  if (kms.timeoutMs <= 0) errors.push(invalid(path.child('timeout'), kms.timeoutMs, 'timeout should be a positive value'));
  if (kms.endpoint === '') errors.push(invalid(path.child('endpoint'), '', 'endpoint is a mandatory field for a kms'));
  else {
    const scheme = /^([a-zA-Z][a-zA-Z0-9+.-]*):/.exec(kms.endpoint)?.[1] ?? '';
    if (scheme !== 'unix')
      errors.push(invalid(path.child('endpoint'), kms.endpoint, `unsupported scheme "${scheme}" for KMS provider, only unix is supported`));
  }
  if (kms.apiVersion === 'v2' && kms.cacheSize !== undefined) {
    errors.push(invalid(path.child('cachesize'), kms.cacheSize, 'cachesize is not supported in v2'));
  }
  if (kms.apiVersion === 'v1') {
    // KMS v1 is off by default upstream (feature gate KMSv1) and not implemented here.
    errors.push(
      invalid(path.child('apiVersion'), kms.apiVersion, 'KMSv1 is deprecated and will only receive security updates going forward. Use KMSv2 instead'),
    );
  } else if (kms.apiVersion !== 'v2') {
    errors.push(invalid(path.child('apiVersion'), kms.apiVersion, 'unsupported apiVersion apiVersion for KMS provider, only v1 and v2 are supported'));
  }
  return errors;
}

/** Go's base64.StdEncoding: padded, standard alphabet, nothing else. */
export function decodeBase64Strict(text: string): Buffer | undefined {
  if (!/^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/.test(text)) return undefined;
  return Buffer.from(text, 'base64');
}

/** A kms provider as built from its configuration: its transformer and its plugin's health. */
export interface KMSProvider {
  readonly transformer: Transformer;
  /** The provider's health check (the plugin's Status); rejects with the reason. */
  check(): Promise<void>;
  /** Settles once the plugin was asked once at start (whatever it answered). */
  readonly primed: Promise<void>;
  /** The per-call deadline: in-flight calls are done within it. */
  readonly timeoutMs: number;
  close(): void;
}

/** Makes a kms provider (gRPC to its plugin); injected so that storage/value does not load gRPC unless asked. */
export type KMSTransformerFactory = (config: KMSConfiguration) => KMSProvider;

function prefixed(provider: string, keys: readonly EncryptionKey[], make: (key: Buffer) => Transformer): PrefixTransformer[] {
  return keys.map((key) => ({
    prefix: Buffer.from(`k8s:enc:${provider}:v1:${key.name}:`),
    transformer: make(decodeBase64Strict(key.secret) ?? Buffer.alloc(0)),
  }));
}

/** The transformers one resources[] entry's providers make, in order. */
function providerTransformers(
  provider: ProviderConfiguration,
  kms: KMSTransformerFactory | undefined,
  kmsProviders: KMSProvider[],
): PrefixTransformer[] {
  if (provider.identity) return [{ prefix: Buffer.alloc(0), transformer: IDENTITY }];
  // Each provider first tries its own keys in order; their shared prefix ends with the key name.
  const group = (name: string, keys: readonly EncryptionKey[], make: (key: Buffer) => Transformer): PrefixTransformer[] => [
    {
      prefix: Buffer.from(`k8s:enc:${name}:v1:`),
      transformer: new PrefixTransformers(
        prefixed(name, keys, make).map((t) => ({ ...t, prefix: t.prefix.subarray(`k8s:enc:${name}:v1:`.length) })),
        `no matching key was found for the provided ${name.toUpperCase()} transformer`,
      ),
    },
  ];
  if (provider.aesgcm) return group('aesgcm', provider.aesgcm.keys, (k) => new AesGcmTransformer(k));
  if (provider.aescbc) return group('aescbc', provider.aescbc.keys, (k) => new AesCbcTransformer(k));
  if (provider.secretbox) return group('secretbox', provider.secretbox.keys, (k) => new SecretboxTransformer(k));
  if (provider.kms) {
    if (!kms) throw new EncryptionConfigError('kms providers are not available in this build');
    const made = kms(provider.kms);
    kmsProviders.push(made);
    return [{ prefix: Buffer.from(`k8s:enc:kms:v2:${provider.kms.name}:`), transformer: made.transformer }];
  }
  return [];
}

/** Which transformer reads and writes each group and resource, from one configuration. */
export class ResourceTransformers {
  private readonly overrides = new Map<string, Transformer>();
  /** In configuration order: the health check calls them kms-provider-0, -1, ... */
  private readonly kmsProviders: KMSProvider[] = [];

  constructor(config: EncryptionConfiguration, kms?: KMSTransformerFactory) {
    const chains = new Map<string, PrefixTransformer[]>();
    for (const entry of config.resources) {
      const transformers: PrefixTransformer[] = [];
      for (const provider of entry.providers) {
        try {
          transformers.push(...providerTransformers(provider, kms, this.kmsProviders));
        } catch (err) {
          // A configuration that does not build leaves no plugin connection or poll behind.
          this.close();
          throw err;
        }
      }
      // A resource named in several entries gets their providers in entry order.
      for (const name of entry.resources) {
        const gr = parseGroupResource(name);
        const key = `${gr.group}/${gr.resource}`;
        chains.set(key, [...(chains.get(key) ?? []), ...transformers]);
      }
    }
    for (const [key, chain] of chains) this.overrides.set(key, new PrefixTransformers(chain, 'no matching prefix found'));
  }

  /** transformerFromOverrides: the exact resource, then `*.<group>`, then `*.*`, else identity. */
  transformerFor(group: string, resource: string): Transformer {
    return (
      this.overrides.get(`${group}/${resource}`) ??
      this.overrides.get(`${group}/*`) ??
      this.overrides.get('*/*') ??
      IDENTITY
    );
  }

  get usesKMS(): boolean {
    return this.kmsProviders.length > 0;
  }

  /** Settles once every kms plugin was asked once (so a healthy plugin has given the first DEK). */
  async primed(): Promise<void> {
    await Promise.all(this.kmsProviders.map((p) => p.primed));
  }

  /**
   * The `kms-providers` health check (kmsHealthChecker): every kms provider's check,
   * failures named `kms-provider-<n>`; nothing to check passes.
   */
  async checkKMS(): Promise<void> {
    const errors: string[] = [];
    await Promise.all(
      this.kmsProviders.map(async (p, i) => {
        try {
          await p.check();
        } catch (err) {
          errors[i] = `kms-provider-${i}: ${err instanceof Error ? err.message : String(err)}`;
        }
      }),
    );
    const failed = errors.filter((e) => e !== undefined);
    if (failed.length > 0) throw new Error(failed.length === 1 ? failed[0] : `[${failed.join(', ')}]`);
  }

  /**
   * How long to keep this configuration's plugin connections after a reload replaced
   * it: calls already started finish within their deadline (upstream: twice the sum
   * of the kms timeouts).
   */
  get closeGracePeriodMs(): number {
    return 2 * this.kmsProviders.reduce((sum, p) => sum + p.timeoutMs, 0);
  }

  /** Stops what the providers hold open (KMS plugin connections and their polls). */
  close(): void {
    for (const p of this.kmsProviders) p.close();
  }
}
