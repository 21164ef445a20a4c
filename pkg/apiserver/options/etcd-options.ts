// Where objects are stored: the backend, etcd's endpoints, key prefix and TLS, and
// the watch cache in front of it (k8s.io/apiserver's EtcdOptions).

import type { OptionGroup } from './option-group.js';
import { fileProblems } from './validation.js';

export const STORAGE_BACKENDS = ['sqlite', 'etcd3'] as const;
export type StorageBackend = (typeof STORAGE_BACKENDS)[number];

export interface EtcdOptionValues {
  storageBackend: string;
  etcdServers: string[];
  etcdPrefix: string;
  etcdCaFile: string;
  etcdCertFile: string;
  etcdKeyFile: string;
  /** Serve reads and watches from the watch cache (memory) rather than storage. */
  watchCache: boolean;
}

export const etcdOptions = {
  title: 'Etcd flags',
  flags: [
    {
      name: 'storage-backend',
      field: 'storageBackend',
      kind: 'string',
      usage: 'The storage backend: sqlite (embedded, one replica) or etcd3 (several replicas).',
      default: 'sqlite',
    },
    {
      name: 'etcd-servers',
      field: 'etcdServers',
      kind: 'list',
      usage: 'Comma-separated etcd URLs (scheme://ip:port) for --storage-backend etcd3.',
      default: [],
    },
    {
      name: 'etcd-prefix',
      field: 'etcdPrefix',
      kind: 'string',
      usage: 'The prefix under which every object key is stored.',
      default: '/registry',
    },
    {
      name: 'etcd-cafile',
      field: 'etcdCaFile',
      kind: 'string',
      usage: 'SSL certificate authority file used to secure etcd communication.',
      default: '',
    },
    {
      name: 'etcd-certfile',
      field: 'etcdCertFile',
      kind: 'string',
      usage: 'SSL certification file used to secure etcd communication.',
      default: '',
    },
    {
      name: 'etcd-keyfile',
      field: 'etcdKeyFile',
      kind: 'string',
      usage: 'SSL key file used to secure etcd communication.',
      default: '',
    },
    {
      name: 'watch-cache',
      field: 'watchCache',
      kind: 'bool',
      usage:
        'Serve gets, lists and watches from memory, kept current by one storage watch per resource; each resource also keeps its changes of the last 75 s (or --request-timeout + 15 s, if longer) for watches to resume from: at least 100, at most 102,400 (more for a longer window). --watch-cache=false reads storage for every request.',
      default: true,
    },
  ],
  complete(v) {
    v.storageBackend = v.storageBackend.trim().toLowerCase();
    // "/registry/" and "/registry" name the same place; keys are built as prefix + "/" + ...
    if (v.etcdPrefix.length > 1) v.etcdPrefix = v.etcdPrefix.replace(/\/+$/, '');
  },
  validate(v) {
    const errs: string[] = [];
    if (!(STORAGE_BACKENDS as readonly string[]).includes(v.storageBackend)) {
      errs.push(
        `--storage-backend: unknown backend "${v.storageBackend}" (supported: ${STORAGE_BACKENDS.join(', ')})`,
      );
    }
    if (v.storageBackend === 'etcd3') {
      if (v.etcdServers.length === 0) errs.push('--etcd-servers: required with --storage-backend etcd3');
      for (const server of v.etcdServers) {
        const problem = etcdServerProblem(server);
        if (problem) errs.push(`--etcd-servers: "${server}" ${problem}`);
      }
      if ((v.etcdCertFile === '') !== (v.etcdKeyFile === '')) {
        errs.push('--etcd-certfile and --etcd-keyfile: give both or neither');
      }
      if (v.etcdCertFile !== '' && v.etcdCaFile === '') {
        errs.push("--etcd-certfile: needs --etcd-cafile (the CA that signed etcd's certificate)");
      }
      errs.push(
        ...fileProblems([
          ['--etcd-cafile', v.etcdCaFile],
          ['--etcd-certfile', v.etcdCertFile],
          ['--etcd-keyfile', v.etcdKeyFile],
        ]),
      );
    }
    if (!v.etcdPrefix.startsWith('/')) errs.push(`--etcd-prefix: "${v.etcdPrefix}" must start with "/"`);
    return errs;
  },
} satisfies OptionGroup<EtcdOptionValues>;

function etcdServerProblem(server: string): string | undefined {
  let url: URL;
  try {
    url = new URL(server);
  } catch {
    return 'is not a URL (expected scheme://host:port, e.g. http://127.0.0.1:2379)';
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return 'must use http or https';
  if (url.hostname === '') return 'has no host';
  return undefined;
}
