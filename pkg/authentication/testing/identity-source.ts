// The identity cache as the authenticators read it, held in plain maps a test
// changes between requests (a key deleted, a user disabled, a team gone).

import type { KubeObject } from '../../apis/meta/types.js';
import type { AccessKeySource } from '../access-key-usability.js';

export interface MemoryIdentitySource extends AccessKeySource {
  hasSynced: boolean;
  readonly users: Map<string, KubeObject>;
  readonly teams: Map<string, KubeObject>;
  /** By name; accessKeyByHash finds nothing (tests of tokens need no hashes). */
  readonly keys: Map<string, KubeObject>;
  clear(): void;
}

export function memoryIdentitySource(): MemoryIdentitySource {
  const users = new Map<string, KubeObject>();
  const teams = new Map<string, KubeObject>();
  const keys = new Map<string, KubeObject>();
  const source: MemoryIdentitySource = {
    hasSynced: true,
    users,
    teams,
    keys,
    waitForSync: () => Promise.resolve(source.hasSynced),
    accessKeyByHash: () => undefined,
    accessKey: (name) => keys.get(name),
    user: (name) => users.get(name),
    team: (name) => teams.get(name),
    clear() {
      users.clear();
      teams.clear();
      keys.clear();
      source.hasSynced = true;
    },
  };
  return source;
}
