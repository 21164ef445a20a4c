// POST selfsubjectreviews: who am I (`kubectl auth whoami`). As upstream's
// pkg/registry/authentication/selfsubjectreview: the authenticated user's name, uid,
// groups and extra, as authentication made them. An access key's name is added to
// extra (under `<group>/access-key`), so a person holding several keys sees which one
// is in use; never the key itself. Nothing is stored.

import { protobufDecoder, type ProtobufDecoder } from '../../../apis/meta/protobuf.js';
import type { KubeObject } from '../../../apis/meta/types.js';
import {
  selfSubjectReviewInfo,
  selfSubjectReviewProtobuf,
  type SelfSubjectReview,
  type UserInfo,
} from '../../../apis/authentication/v1/types.js';
import type { AuthenticatedUser } from '../../../authentication/user/user.js';
import type { CreateOptions, RequestContext, ResourceInfo, RESTStorage } from '../../rest/interfaces.js';
import { reviewBody } from '../../rest/review.js';

/** The extra key naming the access key a request used. */
export function accessKeyExtraKey(group: string): string {
  return `${group}/access-key`;
}

export class SelfSubjectReviewStorage implements RESTStorage {
  readonly info: ResourceInfo = selfSubjectReviewInfo;
  private readonly decoder: ProtobufDecoder = protobufDecoder(selfSubjectReviewProtobuf);

  constructor(
    /** The management API group, which names the access-key extra. */
    private readonly group: string,
    private readonly now: () => Date = () => new Date(),
  ) {}

  decodeProtobuf(raw: Buffer): unknown {
    return this.decoder(raw);
  }

  create(ctx: RequestContext, body: unknown, _options: CreateOptions): Promise<KubeObject> {
    reviewBody(body, this.info);
    const user: AuthenticatedUser = ctx.user;
    const extra: Record<string, string[]> = {};
    for (const [key, values] of Object.entries(user.extra ?? {})) extra[key] = [...values];
    if (user.accessKeyName) extra[accessKeyExtraKey(this.group)] = [user.accessKeyName];
    const userInfo: UserInfo = { username: user.name, groups: [...user.groups] };
    if (user.uid) userInfo.uid = user.uid;
    if (Object.keys(extra).length > 0) userInfo.extra = extra;
    const review: SelfSubjectReview = {
      apiVersion: `${this.info.group}/${this.info.version}`,
      kind: 'SelfSubjectReview',
      metadata: {
        creationTimestamp: this.now()
          .toISOString()
          .replace(/\.\d{3}Z$/, 'Z'),
      },
      status: { userInfo },
    };
    return Promise.resolve(review as unknown as KubeObject);
  }
}
