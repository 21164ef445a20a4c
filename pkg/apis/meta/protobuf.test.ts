import assert from 'node:assert/strict';
import { test } from 'node:test';

import {
  CAN_I_GET_HEALTHZ,
  CAN_I_GET_SHARED_SECRET_IN_CI,
  CAN_I_LIST_IN_CI,
  WHOAMI,
} from '../authorization/v1/testing/kubectl-captures.js';
import {
  selfSubjectAccessReviewProtobuf,
  selfSubjectRulesReviewProtobuf,
} from '../authorization/v1/types.js';
import { selfSubjectReviewProtobuf } from '../authentication/v1/types.js';
import { ApiError } from './errors.js';
import { protobufDecoder } from './protobuf.js';

const ssar = protobufDecoder(selfSubjectAccessReviewProtobuf);
const ssrr = protobufDecoder(selfSubjectRulesReviewProtobuf);
const ssr = protobufDecoder(selfSubjectReviewProtobuf);

test("kubectl 1.32's protobuf reviews decode to the objects their JSON form would be", () => {
  assert.deepEqual(ssar(CAN_I_GET_SHARED_SECRET_IN_CI), {
    apiVersion: 'authorization.k8s.io/v1',
    kind: 'SelfSubjectAccessReview',
    spec: {
      resourceAttributes: {
        namespace: 'ci',
        verb: 'get',
        group: 'management.platform.dev',
        resource: 'sharedsecrets',
        name: 'shared',
      },
    },
  });
  assert.deepEqual(ssar(CAN_I_GET_HEALTHZ), {
    apiVersion: 'authorization.k8s.io/v1',
    kind: 'SelfSubjectAccessReview',
    spec: { nonResourceAttributes: { path: '/healthz', verb: 'get' } },
  });
  assert.deepEqual(ssrr(CAN_I_LIST_IN_CI), {
    apiVersion: 'authorization.k8s.io/v1',
    kind: 'SelfSubjectRulesReview',
    spec: { namespace: 'ci' },
  });
  assert.deepEqual(ssr(WHOAMI), { apiVersion: 'authentication.k8s.io/v1', kind: 'SelfSubjectReview' });
});

function badRequest(fn: () => unknown, message: RegExp): void {
  assert.throws(
    fn,
    (err: unknown) => err instanceof ApiError && err.code === 400 && message.test(err.message),
  );
}

test('bodies that are not the kind, not protobuf, cut short or garbage are 400s with a reason', () => {
  badRequest(
    () => ssar(WHOAMI),
    /holds SelfSubjectReview authentication\.k8s\.io\/v1, not SelfSubjectAccessReview/,
  );
  badRequest(
    () => ssar(Buffer.from('{"kind":"SelfSubjectAccessReview"}')),
    /not in the Kubernetes protobuf encoding/,
  );
  badRequest(() => ssar(Buffer.alloc(0)), /not in the Kubernetes protobuf encoding/);
  badRequest(
    () => ssar(CAN_I_GET_SHARED_SECRET_IN_CI.subarray(0, CAN_I_GET_SHARED_SECRET_IN_CI.length - 20)),
    /unable to decode the protobuf body as SelfSubjectAccessReview/,
  );
  badRequest(
    () =>
      ssar(
        Buffer.concat([Buffer.from([0x6b, 0x38, 0x73, 0x00]), Buffer.from([0xff, 0xff, 0xff, 0xff, 0xff])]),
      ),
    /unable to decode the protobuf body/,
  );
});
