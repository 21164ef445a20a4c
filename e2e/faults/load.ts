// The load the fault suite keeps on the servers while it breaks their storage:
// writers that create Teams and record every create the server acknowledged, and
// watchers that behave as client-go's reflector does (list, then watch from the
// list's resourceVersion; after any error resume from the last resourceVersion seen;
// after 410 Gone list again). See ledger.ts for what is counted.

import { request } from 'node:https';
import type { ClientRequest } from 'node:http';

import { readLines } from '../https-client.js';
import type { AckLedger } from './ledger.js';
import { WatchRecord } from './ledger.js';
import type { ReplicaClient, RequestLog } from './replica-client.js';

export const GROUP = 'management.platform.dev';
export const TEAMS = `/apis/${GROUP}/v1/teams`;

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** Pause between a writer's creates: enough load to catch every fault mid-write, not enough to swamp 2 shared cores. */
const WRITE_PAUSE_MS = 40;
/** Pause after a failed request or a broken watch, as a client's backoff. */
const RETRY_PAUSE_MS = 200;

interface ObjectMeta {
  name?: string;
  resourceVersion?: string;
}

function team(name: string): unknown {
  return { apiVersion: `${GROUP}/v1`, kind: 'Team', metadata: { name }, spec: {} };
}

/** Creates Teams through one replica until stopped, recording each acknowledged create. */
export class Writer {
  private stopped = false;
  private seq = 0;
  private done: Promise<void> | undefined;
  /** When each acknowledged create was answered (ms since epoch), in order. */
  readonly ackTimes: number[] = [];

  constructor(
    private readonly client: ReplicaClient,
    private readonly ledger: AckLedger,
    private readonly prefix: string,
  ) {}

  start(): void {
    this.done ??= this.loop();
  }

  private async loop(): Promise<void> {
    while (!this.stopped) {
      // A new name every attempt: a create that failed may still have happened (504 "may
      // have succeeded"), and a retry under its name would only meet AlreadyExists.
      const name = `${this.prefix}-${this.seq++}`;
      const a = await this.client.call('POST', TEAMS, team(name));
      const rv = (a.body['metadata'] as ObjectMeta | undefined)?.resourceVersion;
      if (a.status === 201 && rv !== undefined) {
        this.ledger.add({ name, resourceVersion: BigInt(rv), via: this.client.target.name });
        this.ackTimes.push(Date.now());
        await sleep(WRITE_PAUSE_MS);
      } else {
        await sleep(RETRY_PAUSE_MS);
      }
    }
  }

  /** The first acknowledged create answered at or after `since`, or undefined. */
  firstAckAfter(since: number): number | undefined {
    for (let i = this.ackTimes.length - 1; i >= 0; i--) {
      const t = this.ackTimes[i] as number;
      if (t < since) return this.ackTimes[i + 1];
    }
    return this.ackTimes[0];
  }

  async stop(): Promise<void> {
    this.stopped = true;
    await this.done;
  }
}

type StreamEnd = 'gone' | 'broken';

interface WatchEventLine {
  type?: string;
  object?: { metadata?: ObjectMeta; code?: number };
}

/** Watches Teams through one replica, resuming across every failure, into a WatchRecord. */
export class ResumingWatcher {
  readonly record = new WatchRecord();
  private stopped = false;
  private current: ClientRequest | undefined;
  private done: Promise<void> | undefined;

  constructor(
    private readonly client: ReplicaClient,
    private readonly log: RequestLog,
  ) {}

  /** Lists once, then keeps watching in the background. */
  async start(): Promise<void> {
    while (!(await this.list())) await sleep(RETRY_PAUSE_MS);
    this.done = this.loop();
  }

  private async list(): Promise<boolean> {
    const a = await this.client.call('GET', TEAMS);
    if (a.status !== 200) return false;
    const items = (a.body['items'] as Array<{ metadata: ObjectMeta }> | undefined) ?? [];
    const listRv = (a.body['metadata'] as ObjectMeta | undefined)?.resourceVersion;
    if (listRv === undefined) return false;
    this.record.list(
      items.map((i) => ({
        name: i.metadata.name ?? '',
        resourceVersion: BigInt(i.metadata.resourceVersion ?? '0'),
      })),
      BigInt(listRv),
    );
    return true;
  }

  private async loop(): Promise<void> {
    let needList = false;
    while (!this.stopped) {
      if (needList) {
        if (!(await this.list())) {
          await sleep(RETRY_PAUSE_MS);
          continue;
        }
        needList = false;
      }
      const end = await this.stream();
      if (this.stopped) break;
      if (end === 'gone') {
        needList = true;
      } else {
        this.record.resumed();
        await sleep(RETRY_PAUSE_MS);
      }
    }
  }

  /** One watch request from the last resourceVersion, read until it ends. */
  private stream(): Promise<StreamEnd> {
    const { url, ca, token, name } = this.client.target;
    const rv = this.record.lastResourceVersion.toString();
    // Watches end on their own now and then (as client-go's do), which exercises resuming too.
    const timeoutSeconds = 20 + Math.floor(Math.random() * 20);
    const path = `${TEAMS}?watch=true&allowWatchBookmarks=true&resourceVersion=${rv}&timeoutSeconds=${timeoutSeconds}`;
    const started = Date.now();
    return new Promise<StreamEnd>((resolve) => {
      let settled = false;
      const end = (how: StreamEnd): void => {
        if (settled) return;
        settled = true;
        this.current = undefined;
        resolve(how);
      };
      const req = request(
        `${url}/kubernetes/management${path}`,
        { headers: { Accept: 'application/json', Authorization: `Bearer ${token}` }, ca, agent: false },
        (res) => {
          clearTimeout(headersTimer);
          const status = res.statusCode ?? 0;
          // Waiting for a watch's headers is a request held like any other.
          this.log.record(`${name} WATCH`, { status, body: {}, ms: Date.now() - started });
          if (status !== 200) {
            res.resume();
            end(status === 410 ? 'gone' : 'broken');
            return;
          }
          readLines(res, (line) => {
            const stop = this.onLine(line);
            if (stop === undefined) return true;
            req.destroy();
            end(stop);
            return false;
          });
          res.on('end', () => end('broken'));
          res.on('error', () => end('broken'));
          res.on('aborted', () => end('broken'));
        },
      );
      this.current = req;
      const headersTimer = setTimeout(() => req.destroy(new Error('no watch headers within 30 s')), 30_000);
      req.on('error', (e) => {
        clearTimeout(headersTimer);
        if (!settled)
          this.log.record(`${name} WATCH`, {
            status: 0,
            body: {},
            error: e.message,
            ms: Date.now() - started,
          });
        end('broken');
      });
      req.end();
    });
  }

  private onLine(line: string): StreamEnd | undefined {
    let ev: WatchEventLine;
    try {
      ev = JSON.parse(line) as WatchEventLine;
    } catch {
      return 'broken';
    }
    if (ev.type === 'ERROR') return ev.object?.code === 410 ? 'gone' : 'broken';
    const meta = ev.object?.metadata;
    if (meta?.resourceVersion === undefined) return undefined;
    const rv = BigInt(meta.resourceVersion);
    if (ev.type === 'BOOKMARK') this.record.bookmark(rv);
    else this.record.event(ev.type ?? '', meta.name ?? '', rv);
    return undefined;
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.current?.destroy();
    await this.done;
  }
}
