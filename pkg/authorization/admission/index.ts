// The platform's admission: every check, in order, as one Admission for the Store.

import type { KubeObject } from '../../apis/meta/types.js';
import type { Admission, RequestContext, ResourceInfo } from '../../registry/rest/interfaces.js';

export { AccessKeyAdmission } from './access-keys.js';
export { EscalationAdmission } from './escalation.js';
export { OwnerReferencesAdmission, type KindResolver } from './owner-references.js';

export class AdmissionChain implements Admission {
  constructor(private readonly plugins: readonly Admission[]) {}

  async admit(
    ctx: RequestContext,
    obj: KubeObject,
    old: KubeObject | undefined,
    info: ResourceInfo,
  ): Promise<void> {
    for (const plugin of this.plugins) await plugin.admit(ctx, obj, old, info);
  }
}
