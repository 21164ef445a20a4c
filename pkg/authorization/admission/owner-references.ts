// ownerReferences[].blockOwnerDeletion: true holds back the deletion of the owner
// (foreground deletion waits for such dependents), so setting it needs permission
// to delete the owner; without it the write is refused with 422, as the
// specification says (Kubernetes' OwnerReference documentation: "a user needs
// delete permission of the owner, otherwise 422 (Unprocessable Entity) will be
// returned"). Only references that newly block are checked, so a caller may still
// update an object that someone allowed to had marked.

import { newInvalid } from '../../apis/meta/errors.js';
import { forbidden, FieldPath, type FieldError } from '../../apis/meta/field-errors.js';
import type { KubeObject, OwnerReference } from '../../apis/meta/types.js';
import type { Admission, RequestContext, ResourceInfo } from '../../registry/rest/interfaces.js';
import { deniedMessage, resourceAttributes, type Permissions } from '../permissions.js';

/** How an owner's apiVersion and kind map to a resource (undefined: not served here). */
export type KindResolver = (
  apiVersion: string,
  kind: string,
) => { readonly group: string; readonly resource: string; readonly namespaced: boolean } | undefined;

function blocking(ref: OwnerReference): boolean {
  return ref.blockOwnerDeletion === true;
}

/** A resource name for a kind nobody here serves: lower case plural, as kubectl guesses. */
function guessResource(kind: string): string {
  const lower = kind.toLowerCase();
  return lower.endsWith('s') ? lower + 'es' : lower + 's';
}

export class OwnerReferencesAdmission implements Admission {
  constructor(
    private readonly permissions: Permissions,
    private readonly resolveKind: KindResolver,
  ) {}

  async admit(
    ctx: RequestContext,
    obj: KubeObject,
    old: KubeObject | undefined,
    info: ResourceInfo,
  ): Promise<void> {
    const refs = obj.metadata.ownerReferences ?? [];
    if (!refs.some(blocking)) return;
    const alreadyBlocking = new Set((old?.metadata.ownerReferences ?? []).filter(blocking).map((r) => r.uid));
    const user = ctx.user;
    const errs: FieldError[] = [];
    const path = FieldPath.root('metadata').child('ownerReferences');
    for (const [i, ref] of refs.entries()) {
      if (!blocking(ref) || alreadyBlocking.has(ref.uid)) continue;
      const slash = ref.apiVersion.indexOf('/');
      const group = slash < 0 ? '' : ref.apiVersion.slice(0, slash);
      const target = this.resolveKind(ref.apiVersion, ref.kind) ?? {
        group,
        resource: guessResource(ref.kind),
        namespaced: false,
      };
      const question = {
        verb: 'delete',
        group: target.group,
        resource: target.resource,
        namespace: target.namespaced ? (obj.metadata.namespace ?? '') : '',
        name: ref.name,
      };
      if (await this.permissions.can(user, question)) continue;
      errs.push(
        forbidden(
          path.index(i).child('blockOwnerDeletion'),
          `cannot set blockOwnerDeletion if an ownerReference refers to a resource you can't delete: ${deniedMessage(resourceAttributes(user, question))}`,
        ),
      );
    }
    if (errs.length > 0)
      throw newInvalid({ group: info.group, kind: info.kind }, obj.metadata.name ?? '', errs);
  }
}
