// How the identity controllers write status: through the kind's status subresource
// (the generic Store's writeStatus), each under its own manager name, as a
// controller's UpdateStatus does upstream. The Stores are built after the identity
// services (they need its cache), so the services reach them through a lookup.

import type { KubeObject } from '../apis/meta/types.js';

export interface StatusWriter {
  /**
   * Sets the status of the object named `name` to what `next` makes of the stored
   * object (undefined: leave it as it is), recorded for `manager`. Rejects with a
   * 404 ApiError when the object is gone.
   */
  writeStatus(name: string, next: (current: KubeObject) => unknown, manager: string): Promise<unknown>;
}

/** The manager of User.status.teams. */
export const TEAM_STATUS_MANAGER = 'platform-team-status';
/** The manager of OwnedAccessKey.status.lastActivity. */
export const ACCESS_KEY_ACTIVITY_MANAGER = 'platform-access-key-activity';

/** A writer that finds its target when it writes: one that is not there yet fails that write. */
export function lateStatusWriter(
  resource: string,
  find: (resource: string) => StatusWriter | undefined,
): StatusWriter {
  return {
    writeStatus(name, next, manager) {
      const writer = find(resource);
      if (!writer) return Promise.reject(new Error(`no status writer for ${resource} yet`));
      return writer.writeStatus(name, next, manager);
    },
  };
}
