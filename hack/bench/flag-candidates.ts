// The pieces of an A/B of node flags on the server (young-generation-ab.ts,
// gc-threads-ab.ts): candidates read from "label=flags;label=flags", one server host
// per candidate started with the server's own flags and then the candidate's (a V8
// flag's last value wins), rounds that visit the candidates' servers in a rotated order
// (neighbours in time see the same machine load), and a process's RSS from /proc.

import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Child } from './children.js';
import { plainKeyBody, request, untilKeyWorks } from './get-sides.js';
import type { HttpTarget, Job } from './load.js';
import { API_PATH, userBody } from './objects.js';
import { roundOrder } from './rounds.js';
import type { HostStarted } from './server-host.js';

export interface Candidate {
  readonly label: string;
  readonly flags: readonly string[];
}

/** "label=flags;label=flags;..." (flags separated by spaces; none after '=' is the server's own). */
export function parseCandidates(spec: string): Candidate[] {
  return spec
    .split(';')
    .filter((c) => c.trim() !== '')
    .map((c) => {
      const at = c.indexOf('=');
      const [label, flags] = at < 0 ? [c, ''] : [c.slice(0, at), c.slice(at + 1)];
      return { label: label.trim(), flags: flags.split(/\s+/).filter((f) => f !== '') };
    });
}

export interface FlaggedServer {
  readonly label: string;
  readonly host: Child;
  readonly admin: HttpTarget;
  /** A plain user's target and path, once the script has added one. */
  reader?: { target: HttpTarget; path: string };
}

/**
 * A server host (run with --expose-gc for the heap figures) with the candidate's node
 * flags after the server's own, its log and data under `dir`; pushed on `children` so
 * the script stops it.
 */
export async function startFlaggedServer(
  dir: string,
  children: Child[],
  label: string,
  flags: readonly string[],
  storage: readonly string[],
): Promise<FlaggedServer> {
  const host = Child.start(label, 'server-host', {
    logFile: join(dir, `${label}.log`),
    gc: true,
    nodeFlags: flags,
  });
  children.push(host);
  const started = await host.call<HostStarted>({
    start: { args: ['--secure-port', '0', '--data-dir', join(dir, label), ...storage] },
  });
  return { label, host, admin: { origin: started.origin, token: started.token } };
}

/**
 * A plain User "reader" with an access key of their own (the key's text `reader` padded,
 * then `keyTail`), reading their own User: the get rows' caller, as suite.ts's get rows.
 */
export async function addReader(load: Child, server: FlaggedServer, keyTail: string): Promise<void> {
  const key = `${'reader'.padEnd(40, 'z')}${keyTail}`;
  await request(load, server.admin, 'POST', `${API_PATH}/users`, userBody('reader'));
  await request(
    load,
    server.admin,
    'POST',
    `${API_PATH}/ownedaccesskeys`,
    plainKeyBody('reader-key', 'reader', key),
  );
  const target: HttpTarget = { origin: server.admin.origin, token: key };
  const path = `${API_PATH}/users/reader`;
  await untilKeyWorks(load, target, path, server.label);
  server.reader = { target, path };
}

/** The reader's get of their own User by `clients` clients for `durationMs`. */
export const readerGetJob = (s: FlaggedServer, clients: number, durationMs: number): Job => ({
  kind: 'get',
  target: s.reader!.target,
  paths: [s.reader!.path],
  concurrency: clients,
  warmupMs: 0,
  durationMs,
});

/**
 * `rounds` rounds over `servers` (one per candidate, in the candidates' order), after
 * one warm-up window each; each round visits them in roundOrder's rotated order. The
 * windows by candidate label.
 */
export async function alternateCandidates<W>(
  candidates: readonly Candidate[],
  servers: readonly FlaggedServer[],
  rounds: number,
  measure: (s: FlaggedServer, warmUp: boolean) => Promise<W>,
  progress: string,
): Promise<Map<string, W[]>> {
  for (const s of servers) await measure(s, true);
  const results = new Map<string, W[]>(candidates.map((c) => [c.label, []]));
  for (let i = 0; i < rounds; i++) {
    for (const k of roundOrder(servers.length, i))
      results.get(candidates[k]!.label)!.push(await measure(servers[k]!, false));
    process.stderr.write(`${progress}: round ${i + 1}/${rounds}\n`);
  }
  return results;
}

/** `pid`'s resident set now, MiB, read from /proc (no collection forced). */
export function rssMb(pid: number): number {
  const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return Number(m?.[1] ?? NaN) / 1024;
}

/** A figure with `d` decimals, or '–' for none. */
export const fmt = (x: number, d = 0): string => (Number.isFinite(x) ? x.toFixed(d) : '–');
