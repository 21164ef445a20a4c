// node dist/hack/bench/console-save-ab.js [--saves N] [--rounds R]
//
// What the console's guarded saves cost the server, A/B in one process. A detail page
// used to save a merge patch carrying the shown resourceVersion (so any write, even
// the server's own status.lastActivity of a key in use, made it a 409); it now sends
// a JSON Patch that tests the object's uid and the edited field's shown value, then
// replaces it (console/src/field-patch.ts). The whole server (startWithAdmin: SQLite,
// watch cache) runs here; one client saves an access key's description `--saves`
// times, one save at a time on one keep-alive connection, each from the answer to the
// previous one, as a page does:
//   merge    application/merge-patch+json {metadata: {resourceVersion}, spec: {description}}
//   guarded  application/json-patch+json  [test uid, test /spec/description, replace]
// Rounds alternate merge, guarded, ... (the order rotating), and the median round
// counts. Reports saves per second and this process's CPU µs per save
// (`process.cpuUsage()` over the round; client and server share the process, so both
// sides' TLS and JSON count, alike for both modes). Loopback only, bounded; small
// enough for a shared machine.

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';

import { Agent, request } from 'undici';

import { startWithAdmin } from '../../pkg/server/testing.js';

const { values } = parseArgs({
  options: {
    saves: { type: 'string', default: '300' },
    rounds: { type: 'string', default: '5' },
  },
});
const SAVES = Number(values.saves);
const ROUNDS = Number(values.rounds);
const MODES = ['merge', 'guarded'] as const;
type Mode = (typeof MODES)[number];

interface Key {
  metadata: { uid: string; resourceVersion: string };
  spec: { description?: string };
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? NaN;

/** The body and content type of one save of `description` over the key as last answered. */
function saveOf(mode: Mode, shown: Key, description: string): { body: unknown; type: string } {
  if (mode === 'merge') {
    return {
      type: 'application/merge-patch+json',
      body: { metadata: { resourceVersion: shown.metadata.resourceVersion }, spec: { description } },
    };
  }
  return {
    type: 'application/json-patch+json',
    body: [
      { op: 'test', path: '/metadata/uid', value: shown.metadata.uid },
      { op: 'test', path: '/spec/description', value: shown.spec.description },
      { op: 'replace', path: '/spec/description', value: description },
    ],
  };
}

async function main(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'console-save-ab-'));
  const started = await startWithAdmin(dir);
  const dispatcher = new Agent({ connect: { ca: started.ca }, connections: 1 });
  const base = `${started.server.url}/kubernetes/management/apis/management.platform.dev/v1`;
  const call = async (method: 'POST' | 'PATCH', path: string, body: unknown, type: string): Promise<Key> => {
    const res = await request(`${base}${path}`, {
      method,
      dispatcher,
      headers: { authorization: `Bearer ${started.token}`, accept: 'application/json', 'content-type': type },
      body: JSON.stringify(body),
    });
    const text = await res.body.text();
    if (res.statusCode >= 300) throw new Error(`${method} ${path}: ${res.statusCode} ${text}`);
    return JSON.parse(text) as Key;
  };
  try {
    let shown = await call(
      'POST',
      '/ownedaccesskeys',
      { metadata: { name: 'edited' }, spec: { user: 'admin', type: 'User', description: '0' } },
      'application/json',
    );
    let n = 0;
    const round = async (mode: Mode) => {
      const cpu = process.cpuUsage();
      const t0 = performance.now();
      for (let s = 0; s < SAVES; s++) {
        const { body, type } = saveOf(mode, shown, String(++n));
        shown = await call('PATCH', '/ownedaccesskeys/edited', body, type);
      }
      const elapsed = performance.now() - t0;
      const used = process.cpuUsage(cpu);
      return { savesPerSecond: (SAVES * 1000) / elapsed, cpuUsPerSave: (used.user + used.system) / SAVES };
    };
    // Warm up (JIT, the watch cache) with one round of each, not counted.
    for (const mode of MODES) await round(mode);
    const results = new Map<Mode, { savesPerSecond: number; cpuUsPerSave: number }[]>(
      MODES.map((m) => [m, []]),
    );
    for (let r = 0; r < ROUNDS; r++) {
      const order = r % 2 === 0 ? MODES : [...MODES].reverse();
      for (const mode of order) results.get(mode)?.push(await round(mode));
    }
    console.log(`${SAVES} saves per round, ${ROUNDS} rounds (median)`);
    const merge = median(results.get('merge')?.map((x) => x.cpuUsPerSave) ?? []);
    for (const mode of MODES) {
      const rs = results.get(mode) ?? [];
      const cpu = median(rs.map((x) => x.cpuUsPerSave));
      console.log(
        `${mode.padEnd(8)} ${median(rs.map((x) => x.savesPerSecond))
          .toFixed(0)
          .padStart(
            6,
          )} saves/s  ${cpu.toFixed(0).padStart(6)} CPU µs/save  (${(cpu / merge).toFixed(2)}× merge)` +
          `  rounds: ${rs.map((x) => x.cpuUsPerSave.toFixed(0)).join(' ')}`,
      );
    }
  } finally {
    await dispatcher.close();
    await started.server.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

await main();
