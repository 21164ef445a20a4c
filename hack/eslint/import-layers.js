// The layer rule: imports point down the layers of docs/design.md ("The house").
// A small ESLint rule rather than no-restricted-imports patterns: imports here are
// relative, so the same folder is spelled differently at every depth, and two
// folders share names (pkg/apis/authentication and pkg/authentication); the rule
// resolves each import to its path from the repository's root and compares folders,
// as Kubernetes' import-boss does. The layers themselves live in eslint.config.js.

import path from 'node:path';

/**
 * @typedef {object} LayerOptions
 * @property {string[][]} layers folders, bottom layer first; a folder on a line may import
 *   any folder on a line before it, never one on its own line or after it
 * @property {Record<string, string[]>} onlyImportedBy folders only the listed folders may import
 * @property {Record<string, string[]>} mayNotImport folders a folder may not import although lower
 * @property {string[]} free folders outside the layers (developer scripts, e2e tests) that may
 *   import any folder but cmd/
 */

/** The folder of `file` that the layers name: the longest listed prefix. */
function folderOf(file, folders) {
  let best;
  for (const folder of folders) {
    if (
      (file === folder || file.startsWith(`${folder}/`)) &&
      (best === undefined || folder.length > best.length)
    ) {
      best = folder;
    }
  }
  return best;
}

/** Tests and test helpers assemble the real parts (a store over a backend): only cmd/ is closed to them. */
function isTest(file) {
  return file.endsWith('.test.ts') || file.split('/').includes('testing');
}

/** @type {import('eslint').Rule.RuleModule} */
export const importLayers = {
  meta: {
    type: 'problem',
    docs: { description: 'Imports point down the layers of docs/design.md' },
    schema: [{ type: 'object' }],
    messages: {
      cmd: '{{from}} imports {{to}}: nothing imports cmd/ (docs/design.md, "The house")',
      unlisted:
        '{{folder}} is in no layer: add it to the layers in eslint.config.js and docs/design.md ("The house")',
      upward:
        '{{from}} imports {{to}}, which is {{where}}: imports point down the layers of docs/design.md ("The house"); move what both need down instead',
      onlyImportedBy:
        '{{from}} imports {{to}}, which only {{allowed}} may import (docs/design.md, "The house")',
      mayNotImport: '{{from}} imports {{to}}, which it may not import (docs/design.md, "The house")',
    },
  },
  create(context) {
    /** @type {LayerOptions} */
    const options = context.options[0];
    const rank = new Map();
    options.layers.forEach((line, i) => line.forEach((folder) => rank.set(folder, i)));
    const layered = [...rank.keys()];
    const root = context.cwd;
    const file = path.relative(root, context.filename).split(path.sep).join('/');
    const test = isTest(file);
    const freeFolder = folderOf(file, options.free);
    const fromFolder = folderOf(file, layered);

    function check(node, source) {
      if (typeof source !== 'string' || !source.startsWith('.')) return;
      const target = path.posix.normalize(path.posix.join(path.posix.dirname(file), source));
      const data = { from: fromFolder ?? freeFolder ?? file, to: target };
      if (target === 'cmd' || target.startsWith('cmd/')) {
        if (!file.startsWith('cmd/')) context.report({ node, messageId: 'cmd', data });
        return;
      }
      if (test || freeFolder !== undefined || fromFolder === undefined) return;
      const toFolder = folderOf(target, layered);
      if (toFolder === undefined || toFolder === fromFolder) return;
      data.to = toFolder;
      const allowed = options.onlyImportedBy[toFolder];
      if (allowed && !allowed.includes(fromFolder)) {
        context.report({ node, messageId: 'onlyImportedBy', data: { ...data, allowed: allowed.join(', ') } });
        return;
      }
      if (options.mayNotImport[fromFolder]?.includes(toFolder)) {
        context.report({ node, messageId: 'mayNotImport', data });
        return;
      }
      const from = rank.get(fromFolder);
      const to = rank.get(toFolder);
      if (to >= from) {
        const where = to === from ? 'on the same layer' : 'on a layer above it';
        context.report({ node, messageId: 'upward', data: { ...data, where } });
      }
    }

    return {
      Program(node) {
        const inScope = file.startsWith('pkg/') || file.startsWith('cmd/');
        if (inScope && freeFolder === undefined && fromFolder === undefined) {
          const folder = file.split('/').slice(0, 2).join('/');
          context.report({ node, messageId: 'unlisted', data: { folder } });
        }
      },
      ImportDeclaration: (node) => check(node, node.source.value),
      ExportNamedDeclaration: (node) => node.source && check(node, node.source.value),
      ExportAllDeclaration: (node) => check(node, node.source.value),
      ImportExpression: (node) => node.source.type === 'Literal' && check(node, node.source.value),
    };
  },
};
