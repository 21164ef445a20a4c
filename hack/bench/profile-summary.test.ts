import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';

import {
  type CpuProfile,
  formatProfileSummary,
  NO_PROJECT_FRAME,
  summariseProfile,
} from './profile-summary.js';

const ROOT = 'file:///r/dist';
const frame = (functionName: string, url: string, lineNumber = 0) => ({ functionName, url, lineNumber });

// A stack the server might sample: a handler (ours) calling the storage codec (ours),
// which writes through Node and native code; beside it gRPC with no frame of ours, a
// package that ships its own dist/pkg/ (not ours), a generated protobufjs codec, GC,
// (program), idle, and the profiler's own stop call.
const PROFILE: CpuProfile = {
  nodes: [
    { id: 1, callFrame: frame('(root)', ''), children: [2, 3, 4, 5, 9, 12] },
    { id: 2, callFrame: frame('(idle)', '') },
    { id: 3, callFrame: frame('(program)', '') },
    { id: 4, callFrame: frame('(garbage collector)', '') },
    { id: 5, callFrame: frame('handle', `${ROOT}/pkg/apiserver/handlers.js`, 9), children: [6, 11] },
    { id: 6, callFrame: frame('encode', `${ROOT}/pkg/storage/etcd3/codec.js`, 41), children: [7] },
    { id: 7, callFrame: frame('writev', 'node:internal/stream_base_commons'), children: [8] },
    { id: 8, callFrame: frame('writeBuffer', '') },
    {
      id: 9,
      callFrame: frame('sendMessage', 'file:///r/node_modules/@grpc/grpc-js/build/src/call.js'),
      children: [10],
    },
    { id: 10, callFrame: frame('x', 'file:///r/node_modules/foo/dist/pkg/x.js') },
    { id: 11, callFrame: frame('TxnResponse$decode', '') },
    { id: 12, callFrame: frame('post', `${ROOT}/hack/bench/profiler.js`, 6), children: [13] },
    { id: 13, callFrame: frame('dispatch', '') },
  ],
  samples: [2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 13],
  timeDeltas: [100, 10, 20, 30, 40, 50, 5, 60, 7, 3, 1000].map((ms) => ms * 1000),
};

const asObject = (rows: readonly (readonly [string, number])[]): Record<string, number> =>
  Object.fromEntries(rows.map(([k, us]) => [k, us / 1000]));

test("splits sampled time into idle, the profiler's own, busy, (program) and GC", () => {
  const s = summariseProfile(PROFILE);
  const { sampledUs, idleUs, profilerUs, busyUs, programUs, gcUs } = s;
  assert.deepEqual(
    { sampledUs, idleUs, profilerUs, busyUs, programUs, gcUs },
    {
      sampledUs: 1_325_000,
      idleUs: 100_000,
      profilerUs: 1_000_000,
      busyUs: 225_000,
      programUs: 10_000,
      gcUs: 20_000,
    },
  );
});

test('self time by area at each grouping', () => {
  const common = {
    '(program)': 10,
    '(gc)': 20,
    '(native)': 5,
    'npm @grpc/grpc-js': 60,
    'npm foo': 7,
    'npm protobufjs (generated codecs)': 3,
  };
  assert.deepEqual(asObject(summariseProfile(PROFILE, 'folder').selfByArea), {
    ...common,
    'pkg/apiserver': 30,
    'pkg/storage/etcd3': 40,
    'node:stream_base_commons': 50,
  });
  assert.deepEqual(asObject(summariseProfile(PROFILE, 'package').selfByArea), {
    ...common,
    'pkg/apiserver': 30,
    'pkg/storage': 40,
    'node:': 50,
  });
  assert.deepEqual(asObject(summariseProfile(PROFILE, 'file').selfByArea), {
    ...common,
    'pkg/apiserver/handlers.js': 30,
    'pkg/storage/etcd3/codec.js': 40,
    'node:internal/stream_base_commons': 50,
  });
  // Sorted most first.
  assert.equal(summariseProfile(PROFILE).selfByArea[0]?.[0], 'npm @grpc/grpc-js');
});

test('each busy sample is charged to its nearest project frame', () => {
  const s = summariseProfile(PROFILE);
  assert.deepEqual(asObject(s.byNearestProjectFrame), {
    'encode pkg/storage/etcd3/codec.js:42': 40 + 50 + 5,
    'handle pkg/apiserver/handlers.js:10': 30 + 3,
    [NO_PROJECT_FRAME]: 10 + 20 + 60 + 7,
  });
  assert.deepEqual(asObject(s.totalByProjectFunction), {
    'handle pkg/apiserver/handlers.js:10': 30 + 40 + 50 + 5 + 3,
    'encode pkg/storage/etcd3/codec.js:42': 40 + 50 + 5,
  });
  assert.equal(asObject(s.selfByFunction)['sendMessage @grpc/grpc-js/build/src/call.js:1'], 60);
});

test('a profile without timeDeltas counts samples', () => {
  const { timeDeltas: _, ...counts } = PROFILE;
  const s = summariseProfile(counts);
  assert.equal(s.busyUs, 9);
  assert.equal(s.profilerUs, 1);
  assert.equal(asObject(s.byNearestProjectFrame)[NO_PROJECT_FRAME], 4 / 1000);
});

test('the printed summary shows shares of busy time and respects --top', () => {
  const lines = formatProfileSummary(summariseProfile(PROFILE), { top: 1, areas: 2 });
  assert.match(
    lines[0] ?? '',
    /busy 225 ms, idle 100 ms, profiler's own 1000 ms; of busy: \(program\) 4\.4%, GC 8\.9%/,
  );
  assert.ok(lines.includes('   26.7%      60 ms  npm @grpc/grpc-js'), lines.join('\n'));
  const areaRows = lines.slice(lines.indexOf('self time by area') + 1, lines.indexOf('', 2));
  assert.equal(areaRows.length, 2);
});

test('the command line prints the summary of a file and rejects bad options', () => {
  const dir = mkdtempSync(join(tmpdir(), 'profile-summary-'));
  try {
    const file = join(dir, 'x.cpuprofile');
    writeFileSync(file, JSON.stringify(PROFILE));
    const script = fileURLToPath(new URL('./profile-summary.js', import.meta.url));
    const ok = spawnSync(process.execPath, [script, file, '--group', 'package'], { encoding: 'utf8' });
    assert.equal(ok.status, 0, ok.stderr);
    assert.match(ok.stdout, /^\s+22\.2%\s+50 ms {2}node:$/m);
    const bad = spawnSync(process.execPath, [script, file, '--group', 'nope'], { encoding: 'utf8' });
    assert.equal(bad.status, 2);
    assert.match(bad.stderr, /usage: profile-summary\.js/);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
