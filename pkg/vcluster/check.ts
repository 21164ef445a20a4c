// The whole check a virtual cluster makes before it connects: resolve the key and
// host (lookup.ts), ask the platform who the key is (`selves`, supplied by the
// caller so this package needs no HTTP client), and require the virtual cluster
// role for the virtual cluster's project (role-check.ts).

import type { ConnectionHost } from './host.js';
import type { ResolvedConnection } from './lookup.js';
import { resolveConnection } from './lookup.js';
import type { KeyIdentity } from './role-check.js';
import { requireVirtualClusterRole } from './role-check.js';
import type { ConnectionSettings } from './settings.js';

/** Asks the platform at `connection.host` who `connection.accessKey` is; throws when it cannot say. */
export type SelfReview = (connection: ResolvedConnection) => Promise<KeyIdentity>;

/** The project is not in the file, not given, and not in the secret: the role cannot be checked. */
export class UnknownProjectError extends Error {
  override readonly name = 'UnknownProjectError';
}

export interface CheckInput {
  readonly settings: ConnectionSettings;
  readonly virtualCluster: { readonly name: string; readonly namespace: string };
  /** The project the caller says the virtual cluster is in; the file's external.platform.project wins. */
  readonly project?: string | undefined;
  readonly env: Readonly<Record<string, string | undefined>>;
  readonly host: ConnectionHost;
  readonly reviewSelf: SelfReview;
}

export interface CheckResult {
  readonly connection: ResolvedConnection;
  readonly project: string;
  readonly identity: KeyIdentity;
}

export async function checkConnection(input: CheckInput): Promise<CheckResult> {
  const connection = await resolveConnection(input);
  const project = input.settings.project ?? input.project ?? connection.project;
  if (!project) {
    throw new UnknownProjectError(
      `cannot tell which project virtual cluster ${input.virtualCluster.namespace}/${input.virtualCluster.name} belongs to: ` +
        'set external.platform.project in its configuration, pass --project, or add a "project" key to the secret',
    );
  }
  const identity = await input.reviewSelf(connection);
  requireVirtualClusterRole(identity, { project, name: input.virtualCluster.name });
  return { connection, project, identity };
}
