// POST selfsubjectrulesreviews: what may I do in this namespace (`kubectl auth can-i
// --list`). As upstream's pkg/registry/authorization/selfsubjectrulesreview: the
// namespace is required, and the rules come from a resolver that knows the policy
// (here: the authorizer chain asked about every resource, see
// pkg/authorization/rules-review.ts). Nothing is stored.

import { newBadRequest } from '../../../apis/meta/errors.js';
import { protobufDecoder, type ProtobufDecoder } from '../../../apis/meta/protobuf.js';
import type { KubeObject } from '../../../apis/meta/types.js';
import {
  selfSubjectRulesReviewInfo,
  selfSubjectRulesReviewProtobuf,
  type SelfSubjectRulesReview,
  type SubjectRulesReviewStatus,
} from '../../../apis/authorization/v1/types.js';
import type { AuthenticatedUser } from '../../../authentication/user/user.js';
import type { CreateOptions, RequestContext, ResourceInfo, RESTStorage } from '../../rest/interfaces.js';
import { reviewBody } from '../../rest/review.js';

export interface RulesSource {
  rulesFor(user: AuthenticatedUser, namespace: string): Promise<SubjectRulesReviewStatus>;
}

export class SelfSubjectRulesReviewStorage implements RESTStorage {
  readonly info: ResourceInfo = selfSubjectRulesReviewInfo;
  private readonly decoder: ProtobufDecoder = protobufDecoder(selfSubjectRulesReviewProtobuf);

  constructor(private readonly rules: RulesSource) {}

  decodeProtobuf(raw: Buffer): unknown {
    return this.decoder(raw);
  }

  async create(ctx: RequestContext, body: unknown, _options: CreateOptions): Promise<KubeObject> {
    const { spec } = reviewBody(body, this.info);
    const namespace = typeof spec['namespace'] === 'string' ? spec['namespace'] : '';
    if (namespace === '') throw newBadRequest('no namespace on request');
    const review: SelfSubjectRulesReview = {
      apiVersion: `${this.info.group}/${this.info.version}`,
      kind: 'SelfSubjectRulesReview',
      metadata: { creationTimestamp: null },
      spec: {},
      status: await this.rules.rulesFor(ctx.user, namespace),
    };
    return review as unknown as KubeObject;
  }
}
