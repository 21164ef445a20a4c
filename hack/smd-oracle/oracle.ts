// The reference structured-merge-diff as a function: builds hack/smd-oracle (Go,
// from Debian's packaged sources, offline) once into .tmp/smd-oracle/<hash of its
// sources and the Go version>/, and runs it on a batch of write sequences. Also
// translates the engine's schema (pkg/registry/fieldmanager/schema.ts) into smd's
// schema form, so that both sides merge by the same rules.

import { copyFileSync, existsSync, mkdirSync, readdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Atom } from '../../pkg/registry/fieldmanager/schema.js';
import { buildGoProgram, runCommand } from '../go-program.js';

const GOCODE = '/usr/share/gocode/src';

/** Modules Debian ships sources for but which only tests of our dependencies import. */
const EMPTY_MODULES: Readonly<Record<string, string>> = {
  'go-spew': 'github.com/davecgh/go-spew',
  gofuzz: 'github.com/google/gofuzz',
  testify: 'github.com/stretchr/testify',
  'check.v1': 'gopkg.in/check.v1',
};

/** The repository root, found upwards (works from hack/ and from dist/hack/). */
function repoRoot(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  for (;;) {
    if (existsSync(join(dir, 'hack', 'smd-oracle', 'main.go'))) return dir;
    const up = dirname(dir);
    if (up === dir) throw new Error('cannot find the repository root (hack/smd-oracle/main.go)');
    dir = up;
  }
}

function run(cmd: string, args: readonly string[], opts: { input?: string } = {}) {
  return runCommand(cmd, args, { ...opts, maxBuffer: 512 * 1024 * 1024 });
}

/** Lays out the module: main.go, go.mod, the concurrent shim and the empty stubs. */
function prepareSources(srcDir: string, buildDir: string): void {
  mkdirSync(buildDir, { recursive: true });
  copyFileSync(join(srcDir, 'main.go'), join(buildDir, 'main.go'));
  copyFileSync(join(srcDir, 'go.mod'), join(buildDir, 'go.mod'));
  const concurrent = join(buildDir, 'shims', 'concurrent');
  mkdirSync(concurrent, { recursive: true });
  const upstream = join(GOCODE, 'github.com', 'modern-go', 'concurrent');
  for (const f of readdirSync(upstream)) {
    if (f.endsWith('.go') && !f.endsWith('_test.go')) copyFileSync(join(upstream, f), join(concurrent, f));
  }
  // Debian ships modern-go/concurrent without a go.mod; a replace target needs one.
  writeFileSync(join(concurrent, 'go.mod'), 'module github.com/modern-go/concurrent\n');
  for (const [dir, module] of Object.entries(EMPTY_MODULES)) {
    mkdirSync(join(buildDir, 'shims', 'empty', dir), { recursive: true });
    writeFileSync(join(buildDir, 'shims', 'empty', dir, 'go.mod'), `module ${module}\n`);
  }
}

let oraclePath: string | undefined;

/**
 * Installs Go and smd's sources when missing (hack/ensure-test-deps.sh) and builds
 * the oracle unless a build of the same sources exists. Throws with the reason.
 */
export function ensureOracle(): string {
  if (oraclePath) return oraclePath;
  const root = repoRoot();
  const haveGo = run('bash', ['-c', 'command -v go']).status === 0;
  if (!haveGo || !existsSync(join(GOCODE, 'sigs.k8s.io', 'structured-merge-diff'))) {
    const ensure = run('bash', [join(root, 'hack', 'ensure-test-deps.sh')]);
    if (ensure.status !== 0)
      throw new Error(
        `hack/ensure-test-deps.sh failed (exit ${ensure.status}):\n${ensure.stdout}${ensure.stderr}`,
      );
  }
  const srcDir = join(root, 'hack', 'smd-oracle');
  const bin = buildGoProgram({
    name: 'smd-oracle',
    root,
    srcDir,
    sources: ['main.go', 'go.mod'],
    // Module mode against the shims prepareSources lays out, offline.
    env: { GOFLAGS: '-mod=mod', GOPROXY: 'off', GOSUMDB: 'off' },
    prepare: (buildDir) => prepareSources(srcDir, buildDir),
  });
  oraclePath = bin;
  return bin;
}

// ---- schema translation --------------------------------------------------------------

type SmdTypeRef = { namedType: string };
type SmdAtom = Record<string, unknown>;

/** The engine's schema in smd's form: every atom a named type, so recursion is expressible. */
export function toSmdSchema(root: Atom): { schema: { types: SmdAtom[] }; rootType: string } {
  const names = new Map<Atom, string>();
  const types: SmdAtom[] = [];
  const ref = (atom: Atom): SmdTypeRef => {
    const known = names.get(atom);
    if (known) return { namedType: known };
    const name = `t${names.size}`;
    names.set(atom, name);
    const def: SmdAtom = { name };
    types.push(def);
    if (atom.scalar) def['scalar'] = atom.scalar;
    if (atom.list) {
      def['list'] = {
        elementType: ref(atom.list.elementType),
        elementRelationship: atom.list.relationship,
        ...(atom.list.keys.length > 0 ? { keys: [...atom.list.keys] } : {}),
      };
    }
    if (atom.map) {
      def['map'] = {
        fields: [...atom.map.fields].map(([fieldName, type]) => ({ name: fieldName, type: ref(type) })),
        ...(atom.map.elementType ? { elementType: ref(atom.map.elementType) } : {}),
        elementRelationship: atom.map.relationship,
      };
    }
    return { namedType: name };
  };
  const rootType = ref(root).namedType;
  return { schema: { types }, rootType };
}

// ---- running it -----------------------------------------------------------------------------

export interface OracleOp {
  readonly op: 'apply' | 'update';
  readonly manager: string;
  readonly force: boolean;
  readonly object: unknown;
}

export interface OracleCase {
  readonly live?: unknown;
  readonly ops: readonly OracleOp[];
}

export interface OracleStep {
  readonly object: unknown;
  readonly managers: Record<string, { applied: boolean; apiVersion: string; fieldsV1: unknown }>;
  readonly conflicts?: readonly { manager: string; path: string }[];
  readonly error?: string;
}

/** Runs every case through the reference implementation; one result per operation. */
export function runOracle(root: Atom, apiVersion: string, cases: readonly OracleCase[]): OracleStep[][] {
  const bin = ensureOracle();
  const { schema, rootType } = toSmdSchema(root);
  const input = JSON.stringify({ schema, rootType, apiVersion, cases });
  const r = run(bin, [], { input });
  if (r.status !== 0) throw new Error(`smd-oracle failed (exit ${r.status}): ${r.stderr}`);
  return JSON.parse(r.stdout) as OracleStep[][];
}
