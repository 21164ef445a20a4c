// Merging a virtual cluster's kube config into the user's. @kubernetes/client-node
// reads and checks both documents (what entries the new one has, that the user's
// file is a kube config at all) and re-reads the result to prove it is usable.
// The merge itself edits the user's YAML document in place, entry by entry: a
// round trip through client-node's model would rewrite every other context (it
// inlines `token-file` contents, drops extensions and comments), and "without
// disturbing other contexts" means leaving them byte for byte as they were.

import { existsSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { delimiter, dirname, join } from 'node:path';
import { KubeConfig } from '@kubernetes/client-node';
import type { ConfigOptions } from '@kubernetes/client-node';
import { isMap, isSeq, parseDocument, YAMLSeq } from 'yaml';
import type { Document } from 'yaml';
import { CliError } from './errors.js';

// Other people's entries may be ones client-node cannot load here (a `token-file`
// that exists only on another machine): skip them when checking, never fail on them.
const LENIENT: ConfigOptions = { onInvalidEntry: 'filter' };

export interface NamedEntries {
  readonly cluster: { name: string; cluster: Record<string, unknown> };
  readonly user: { name: string; user: Record<string, unknown> };
  readonly context: { name: string; context: Record<string, unknown> };
}

/**
 * The current context of a kube config document (text), with its cluster and user,
 * renamed to `name` (one name for all three, so reconnecting replaces them).
 */
export function extractCurrentContext(text: string, name: string): NamedEntries {
  const kc = new KubeConfig();
  try {
    kc.loadFromString(text);
  } catch (err) {
    throw new CliError(`the platform returned a kube config that cannot be read: ${(err as Error).message}`);
  }
  const ctx = kc.getContextObject(kc.getCurrentContext());
  if (!ctx) throw new CliError('the platform returned a kube config without a current context');
  // client-node has checked the document; take the entries from its raw form so
  // fields client-node does not model (extensions, exec settings) come along intact.
  const raw = parseDocument(text).toJS() as Record<string, unknown>;
  const find = (list: unknown, entryName: string, field: string): Record<string, unknown> => {
    const entry = Array.isArray(list)
      ? (list as Array<Record<string, unknown>>).find((e) => e.name === entryName)
      : undefined;
    const body = entry?.[field];
    if (!body || typeof body !== 'object') {
      throw new CliError(
        `the platform returned a kube config whose context names a missing ${field} "${entryName}"`,
      );
    }
    return body as Record<string, unknown>;
  };
  const cluster = find(raw.clusters, ctx.cluster, 'cluster');
  const user = ctx.user ? find(raw.users, ctx.user, 'user') : {};
  const context: Record<string, unknown> = { cluster: name, user: name };
  if (ctx.namespace) context.namespace = ctx.namespace;
  return { cluster: { name, cluster }, user: { name, user }, context: { name, context } };
}

/**
 * The kube config file to change, chosen as kubectl chooses where new entries go
 * (client-go's PathOptions.GetDefaultFilename): --kubeconfig; else with KUBECONFIG
 * the first of its files that exists, or its last when none does; else
 * ~/.kube/config. Entries written to the first existing file win kubectl's merge
 * (the first file to set a name wins), so the new context is the one in effect.
 */
export function kubeconfigPath(
  flag: string | undefined,
  env: Readonly<Record<string, string | undefined>>,
  home: string,
): string {
  if (flag) return flag;
  const list = (env['KUBECONFIG'] ?? '').split(delimiter).filter((p) => p !== '');
  return list.find((p) => existsSync(p)) ?? list.at(-1) ?? join(home, '.kube', 'config');
}

function upsertNamed(doc: Document, listKey: string, entry: { name: string }): void {
  let seq = doc.get(listKey, true);
  if (!isSeq(seq)) {
    // Absent or empty (`clusters:`) becomes a list; anything else is someone's
    // mistake we must not paper over by replacing it.
    const value: unknown = doc.get(listKey);
    if (value !== undefined && value !== null) {
      throw new CliError(`the existing kube config's "${listKey}" is not a list`);
    }
    seq = new YAMLSeq();
    doc.set(listKey, seq);
  }
  const items = (seq as YAMLSeq).items;
  const node = doc.createNode(entry);
  const i = items.findIndex((it) => isMap(it) && it.get('name') === entry.name);
  if (i >= 0) items[i] = node;
  else items.push(node);
}

/** The merged document text: `existing` (may be empty) with the entries added or replaced. */
export function mergeKubeConfigText(existing: string, entries: NamedEntries, switchContext: boolean): string {
  // A file holding only comments parses to null contents: start from an empty mapping then.
  let doc: Document = parseDocument(existing.trim() === '' ? '{}' : existing);
  if (doc.errors.length === 0 && doc.contents === null) doc = parseDocument('{}');
  if (doc.errors.length > 0 || !isMap(doc.contents)) {
    throw new CliError(
      `the existing kube config is not a YAML mapping: ${doc.errors[0]?.message ?? 'unexpected content'}`,
    );
  }
  if (!doc.has('apiVersion')) doc.set('apiVersion', 'v1');
  if (!doc.has('kind')) doc.set('kind', 'Config');
  upsertNamed(doc, 'clusters', entries.cluster);
  upsertNamed(doc, 'users', entries.user);
  upsertNamed(doc, 'contexts', entries.context);
  if (switchContext || !doc.get('current-context')) doc.set('current-context', entries.context.name);
  return doc.toString({ lineWidth: 0 });
}

/**
 * Merges the entries into the kube config at `path` (created if missing). The file
 * is written 0600, as kubectl writes it: it holds credentials.
 */
export function mergeIntoKubeConfigFile(path: string, entries: NamedEntries, switchContext: boolean): void {
  let existing = '';
  if (existsSync(path)) {
    existing = readFileSync(path, 'utf8');
    if (existing.trim() !== '') {
      try {
        new KubeConfig().loadFromString(existing, LENIENT);
      } catch (err) {
        throw new CliError(
          `${path} is not a valid kube config (${(err as Error).message}); fix it or use --kubeconfig`,
        );
      }
    }
  }
  let merged: string;
  try {
    merged = mergeKubeConfigText(existing, entries, switchContext);
  } catch (err) {
    if (!(err instanceof CliError)) throw err;
    throw new CliError(`${path}: ${err.message}; fix it or use --kubeconfig`);
  }
  const check = new KubeConfig();
  check.loadFromString(merged, LENIENT);
  if (!check.getContextObject(entries.context.name)) {
    throw new CliError(`internal error: the merged kube config lacks context "${entries.context.name}"`);
  }
  mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
  const tmp = `${path}.platform-${process.pid}.tmp`;
  try {
    writeFileSync(tmp, merged, { mode: 0o600, flag: 'wx' });
    renameSync(tmp, path);
  } catch (err) {
    rmSync(tmp, { force: true });
    throw new CliError(`cannot write ${path}: ${(err as Error).message}`);
  }
}
