// node dist/hack/bench/encryption-cost.js [--objects N] [--rounds R]
//
// The cost of encryption at rest where it is paid: KVStorage over the embedded
// SQLite file, creating and getting Global Secret-sized objects with no encryption
// (identity), then with the generated default (secretbox), aesgcm and a KMS v2
// provider (gRPC to the test plugin on a unix socket). In
// process, without HTTP, so the ratio is an upper bound of what a client sees: a
// request through the server adds the same fixed HTTP cost to both sides. Small
// enough for a shared machine (`npm run bench` is not); rounds alternate the
// configurations so a noisy neighbour slows them alike, and the median round counts.

import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { SqliteKV } from '../../pkg/storage/sqlite/sqlite-kv.js';
import { KVStorage } from '../../pkg/storage/store.js';
import { TransformedKV } from '../../pkg/storage/transformed-kv.js';
import { AesGcmTransformer } from '../../pkg/storage/value/aes.js';
import { SecretboxTransformer } from '../../pkg/storage/value/secretbox.js';
import { PrefixTransformers, type Transformer } from '../../pkg/storage/value/transformer.js';
import type { KV } from '../../pkg/storage/kv.js';
import { newKMSv2Provider } from '../../pkg/storage/value/kmsv2/provider.js';
import { KMSPluginDouble } from '../../pkg/storage/value/kmsv2/testing/plugin-double.js';

interface Encryption {
  readonly transformer: Transformer;
  close(): Promise<void>;
}

const simple = (transformer: Transformer): Encryption => ({ transformer, close: () => Promise.resolve() });

/**
 * kms: a KMS v2 provider over gRPC to the test plugin (real AES, on a unix socket).
 * Its DEK is wrapped once at start and reused, so a write pays local AES-GCM with a
 * per-value HKDF key, and a read the cached DEK: the plugin is not on the hot path.
 */
async function kmsEncryption(): Promise<Encryption> {
  const dir = mkdtempSync(join(tmpdir(), 'enc-cost-kms-'));
  const plugin = await KMSPluginDouble.start(join(dir, 'kms.sock'));
  const provider = newKMSv2Provider({ apiVersion: 'v2', name: 'bench', endpoint: plugin.endpoint, timeoutMs: 3000 });
  await provider.primed;
  return {
    transformer: new PrefixTransformers([{ prefix: Buffer.from('k8s:enc:kms:v2:bench:'), transformer: provider.transformer }]),
    close: async () => {
      provider.close();
      await plugin.down();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

const CONFIGS: Record<string, (() => Promise<Encryption>) | undefined> = {
  off: undefined,
  secretbox: async () =>
    simple(new PrefixTransformers([{ prefix: Buffer.from('k8s:enc:secretbox:v1:key1:'), transformer: new SecretboxTransformer(randomBytes(32)) }])),
  aesgcm: async () =>
    simple(new PrefixTransformers([{ prefix: Buffer.from('k8s:enc:aesgcm:v1:key1:'), transformer: new AesGcmTransformer(randomBytes(32)) }])),
  kms: kmsEncryption,
};

function secret(i: number): Parameters<KVStorage['create']>[1] {
  return {
    apiVersion: 'management.platform.dev/v1',
    kind: 'SharedSecret',
    metadata: { name: `s${i}`, namespace: 'default', uid: `uid-${i}`, creationTimestamp: new Date().toISOString() },
    spec: { displayName: `Secret ${i}`, data: { password: randomBytes(24).toString('base64'), token: randomBytes(96).toString('base64') } },
  };
}

async function measure(config: string, objects: number): Promise<{ create: number; get: number }> {
  const dir = mkdtempSync(join(tmpdir(), 'enc-cost-'));
  const raw = SqliteKV.open(join(dir, 'platform.db'));
  const encryption = await CONFIGS[config]?.();
  const transformer = encryption?.transformer;
  const kv: KV = transformer ? new TransformedKV(raw, () => transformer) : raw;
  const storage = new KVStorage(kv);
  const key = (i: number): string => `/registry/management.platform.dev/sharedsecrets/default/s${i}`;
  try {
    let t = process.hrtime.bigint();
    for (let i = 0; i < objects; i++) await storage.create(key(i), secret(i));
    const create = Number(process.hrtime.bigint() - t) / 1e3 / objects;
    t = process.hrtime.bigint();
    for (let round = 0; round < 5; round++) for (let i = 0; i < objects; i++) await storage.get(key(i));
    const get = Number(process.hrtime.bigint() - t) / 1e3 / (objects * 5);
    return { create, get };
  } finally {
    await storage.close();
    await encryption?.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)] ?? NaN;
}

const { values } = parseArgs({ options: { objects: { type: 'string', default: '2000' }, rounds: { type: 'string', default: '5' } } });
const objects = Number(values.objects);
const rounds = Number(values.rounds);
const results: Record<string, { create: number[]; get: number[] }> = {};
for (let r = 0; r < rounds; r++) {
  for (const config of Object.keys(CONFIGS)) {
    const m = await measure(config, objects);
    (results[config] ??= { create: [], get: [] }).create.push(m.create);
    results[config].get.push(m.get);
  }
}
const off = results['off'];
console.log(`KVStorage over SQLite, ${objects} Global Secrets, median of ${rounds} rounds (µs per operation)`);
console.log('config      create  (ratio)      get  (ratio)');
for (const [config, r] of Object.entries(results)) {
  const c = median(r.create);
  const g = median(r.get);
  const rc = off ? c / median(off.create) : NaN;
  const rg = off ? g / median(off.get) : NaN;
  console.log(`${config.padEnd(10)} ${c.toFixed(1).padStart(7)}  (${rc.toFixed(2)}x)  ${g.toFixed(1).padStart(7)}  (${rg.toFixed(2)}x)`);
}
