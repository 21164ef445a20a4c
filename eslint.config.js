// Lint rules: the type-aware recommended set, with the few relaxations a server
// that handles untyped JSON needs, and the layers of docs/design.md.
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

import { importLayers } from './hack/eslint/import-layers.js';

// The house's layers, bottom first, as docs/design.md lists them: a folder may import
// the folders on the lines before its own, never one on its own line (a sibling) or
// after it. A file belongs to the longest folder listed that contains it; a new
// folder is one more line (or one more name on a line). Tests and `testing/` helpers
// may import across layers (they assemble real parts); nothing imports cmd/.
export const LAYERS = {
  layers: [
    ['pkg/util'],
    ['pkg/metrics'],
    ['pkg/apis/meta'],
    ['pkg/apis/schema', 'pkg/apis/management', 'pkg/apis/authentication', 'pkg/apis/authorization'],
    ['pkg/audit'],
    ['pkg/storage/value'],
    ['pkg/storage'],
    ['pkg/storage/cacher', 'pkg/storage/etcd3', 'pkg/storage/sqlite'],
    ['pkg/authentication/user'],
    ['pkg/registry/rest', 'pkg/registry/fieldmanager'],
    ['pkg/registry/generic'],
    ['pkg/kubeconfig', 'pkg/vcluster', 'pkg/tokens', 'pkg/hostcluster', 'pkg/identity'],
    ['pkg/authentication'],
    ['pkg/authorization'],
    [
      'pkg/registry/management',
      'pkg/registry/authentication',
      'pkg/registry/authorization',
      'pkg/controller',
    ],
    ['pkg/apiserver'],
    ['pkg/apiserver/options'],
    ['pkg/server'],
    ['pkg/cli'],
    ['cmd/apiserver', 'cmd/platform'],
  ],
  // The backends and the watch cache are chosen and wired by the assembly alone.
  onlyImportedBy: {
    'pkg/storage/etcd3': ['pkg/server'],
    'pkg/storage/sqlite': ['pkg/server'],
    'pkg/storage/cacher': ['pkg/server'],
  },
  // The generic registry knows no concrete kind.
  mayNotImport: { 'pkg/registry/generic': ['pkg/apis/management'] },
  // Developer scripts and end-to-end tests stand outside the layers.
  free: ['hack', 'e2e'],
};

export default tseslint.config(
  { ignores: ['dist/', 'node_modules/', 'data/', 'coverage/', '**/*.d.ts', 'charts/', 'deploy/'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    files: ['**/*.ts'],
    plugins: { layers: { rules: { 'import-layers': importLayers } } },
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      '@typescript-eslint/no-explicit-any': 'error',
      '@typescript-eslint/consistent-type-imports': 'error',
      'no-constant-condition': ['error', { checkLoops: false }],
      eqeqeq: ['error', 'always', { null: 'ignore' }],
      'layers/import-layers': ['error', LAYERS],
    },
  },
  {
    files: ['**/*.mjs', '**/*.js'],
    languageOptions: { globals: { process: 'readonly', console: 'readonly', URL: 'readonly' } },
  },
);
