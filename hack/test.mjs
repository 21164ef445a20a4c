// Runs every check the project has, in the order a reader would want failures:
// install test dependencies, build (which type checks), lint, unit tests, e2e tests.
// `--unit`, `--e2e` or `--faults` runs one group only (after the build). The fault
// suite (e2e/faults: a 3-member etcd, two replicas, SIGKILL/SIGSTOP of etcd and of
// servers, about 3 minutes) runs last, after the e2e tests. Tests run from the
// compiled output in dist/, so what is tested is what `npm start` runs.
//
// Budget: the whole run stays well under 30 minutes on 2 cores. Unit test files
// run two at a time; e2e files one at a time (each starts real servers, etcd and
// kubectl processes, and a second file in parallel would only fight for the CPU).
// Every test has a timeout, so a hang fails the run instead of stalling it.
//
// Two kubectls: the e2e files run with the kubectl on PATH ($KUBECTL if set), then the
// kubectl-centric ones again with Debian's kubectl 1.20 when hack/ensure-test-deps.sh
// unpacked it beside a different PATH kubectl (2 to 3 minutes more on 2 busy cores;
// see SECOND_KUBECTL_FILES).
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, statSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';

const args = new Set(process.argv.slice(2));
const onlyUnit = args.has('--unit');
const onlyE2e = args.has('--e2e');
const onlyFaults = args.has('--faults');
const only = onlyUnit || onlyE2e || onlyFaults;

function run(cmd, cmdArgs, opts = {}) {
  console.log(`\n$ ${cmd} ${cmdArgs.join(' ')}`);
  const started = Date.now();
  const r = spawnSync(cmd, cmdArgs, { stdio: 'inherit', ...opts });
  if (r.status !== 0) {
    console.error(`\n${cmd} ${cmdArgs[0] ?? ''} failed (exit ${r.status ?? r.signal})`);
    process.exit(r.status ?? 1);
  }
  console.log(`(${((Date.now() - started) / 1000).toFixed(1)}s)`);
}

// A compiled test whose source was deleted or renamed would otherwise keep running
// from a stale dist/; only tests with a source file next to the code count.
// The console's tests are compiled from console/src into dist/console-tests
// (console/tsconfig.test.json), apart from dist/console, which Vite empties.
const CONSOLE_TESTS = join('dist', 'console-tests');
function hasSource(compiled) {
  const source = compiled.startsWith(CONSOLE_TESTS)
    ? join('console', 'src', relative(CONSOLE_TESTS, compiled))
    : relative('dist', compiled);
  return existsSync(source.replace(/\.js$/, '.ts'));
}

function findTests(dir) {
  const out = [];
  let entries;
  try {
    entries = readdirSync(dir);
  } catch {
    return out;
  }
  for (const name of entries) {
    const p = join(dir, name);
    if (statSync(p).isDirectory()) out.push(...findTests(p));
    else if (name.endsWith('.test.js') && hasSource(p)) out.push(p);
  }
  return out.sort();
}

// Where hack/ensure-test-deps.sh unpacks Debian's kubernetes-client (kubectl 1.20)
// when the kubectl on PATH is another version.
const DEBIAN_KUBECTL = resolve('.cache', 'kubectl-debian', 'usr', 'bin', 'kubectl');

// The e2e files the second kubectl runs again: those where kubectl's version changes
// what it sends or prints. In, and why:
//   kubectl                  every everyday verb, its tables, watch, wait and error
//                            texts: the widest surface of kubectl's output
//   server-side-apply        apply --server-side, diff, the conflict text; 1.26+ moves a
//                            client-side apply's managed fields itself, 1.20 does not
//   openapi-reviews-metrics  explain reads OpenAPI v3 (1.32) or v2 protobuf (1.20)
//   first-hour               version skew, auth can-i (protobuf or JSON reviews), whoami
//                            (which 1.20 lacks)
//   impersonation            --as/--as-group headers, can-i --as; --as-uid (1.23+) and
//                            auth whoami (1.27+), which 1.20 lacks
//   authz                    a plain user's kubectl: Forbidden texts, -o name, tables
//   aggregation              kubectl through the aggregator: discovery v1 (1.20) or
//                            aggregated discovery v2 (1.32), explain through it
// Out: status-subresource (its kubectl half is --subresource, 1.24+; the rest is raw
// HTTPS), garbage-collection, audit and encryption (kubectl only makes the requests;
// what they assert is the server's collector, audit log and stored bytes), cli-connect
// (the platform CLI's kube config; its kubectl calls repeat first-hour's), console,
// client-node, cli, cli-vcluster, raw-http, revocation (no kubectl), kubectl-table
// (a parser's unit test).
const SECOND_KUBECTL_FILES = [
  'kubectl',
  'server-side-apply',
  'openapi-reviews-metrics',
  'first-hour',
  'impersonation',
  'authz',
  'aggregation',
];

/** kubectl's own gitVersion (v1.32.4, v1.20.2), or undefined when it does not run. */
function kubectlVersion(binary) {
  const r = spawnSync(binary, ['version', '--client', '-o', 'json'], { encoding: 'utf8' });
  if (r.status !== 0) return undefined;
  try {
    return JSON.parse(r.stdout).clientVersion?.gitVersion;
  } catch {
    return undefined;
  }
}

run('bash', ['hack/ensure-test-deps.sh']);
// The server and the console (npm run build: tsc, then vite into dist/console).
run('npm', ['run', 'build']);
if (!only) run('npx', ['eslint', '.', '--max-warnings', '0']);

const nodeTest = ['--enable-source-maps', '--test', '--test-reporter=spec'];
if (!only || onlyUnit) {
  const unit = [
    ...findTests('dist/pkg'),
    ...findTests('dist/cmd'),
    ...findTests('dist/hack'),
    ...findTests(CONSOLE_TESTS),
  ];
  run(process.execPath, [...nodeTest, '--test-concurrency=2', '--test-timeout=300000', ...unit]);
}
const FAULTS_DIR = join('dist', 'e2e', 'faults');
if (!only || onlyE2e) {
  const e2e = findTests('dist/e2e').filter((p) => !p.startsWith(FAULTS_DIR));
  // Each e2e test sets its own timeout (2 min); this is the backstop for anything else.
  if (e2e.length > 0) run(process.execPath, [...nodeTest, '--test-concurrency=1', '--test-timeout=600000', ...e2e]);

  const first = kubectlVersion(process.env['KUBECTL'] || 'kubectl');
  const second = existsSync(DEBIAN_KUBECTL) ? kubectlVersion(DEBIAN_KUBECTL) : undefined;
  if (second !== undefined && second !== first) {
    const files = SECOND_KUBECTL_FILES.map((f) => join('dist', 'e2e', `${f}.test.js`));
    // A renamed file must not silently leave the second pass.
    const gone = files.filter((f) => !hasSource(f));
    if (gone.length > 0) {
      console.error(`\nSECOND_KUBECTL_FILES names e2e files that do not exist: ${gone.join(', ')}`);
      process.exit(1);
    }
    console.log(`\nThe kubectl-centric e2e files again, with kubectl ${second} (${DEBIAN_KUBECTL}):`);
    // kubectl's requests and output do not depend on the storage backend: one backend
    // (the first asked for) keeps this pass short.
    const backend = (process.env['E2E_BACKENDS'] ?? 'sqlite').split(',')[0].trim();
    run(process.execPath, [...nodeTest, '--test-concurrency=1', '--test-timeout=600000', ...files], {
      env: { ...process.env, KUBECTL: DEBIAN_KUBECTL, E2E_BACKENDS: backend },
    });
  }
}
if (!only || onlyFaults) {
  // One file at a time: the suite's timings are bounds on outcomes, and a second file
  // competing for the two cores would only make its servers slower to recover.
  const faults = findTests(FAULTS_DIR);
  if (faults.length > 0)
    run(process.execPath, [...nodeTest, '--test-concurrency=1', '--test-timeout=900000', ...faults]);
}
