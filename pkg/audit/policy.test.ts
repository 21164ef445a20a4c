import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';

import { PolicyChecker, loadPolicy, loadPolicyFile } from './policy.js';
import type { AuditAttributes, Level, PolicyRule, Stage } from './types.js';

// The requests and rules of upstream's pkg/audit/policy/checker_test.go.
const tim = { name: 'tim@k8s.io', groups: ['humans', 'developers'] };
const requests: Record<string, AuditAttributes> = {
  namespaced: {
    user: tim,
    verb: 'get',
    namespace: 'default',
    apiGroup: '',
    resource: 'pods',
    subresource: '',
    name: 'busybox',
    isResourceRequest: true,
    path: '/api/v1/namespaces/default/pods/busybox',
  },
  cluster: {
    user: tim,
    verb: 'get',
    namespace: '',
    apiGroup: 'rbac.authorization.k8s.io',
    resource: 'clusterroles',
    subresource: '',
    name: 'edit',
    isResourceRequest: true,
    path: '/apis/rbac.authorization.k8s.io/v1beta1/clusterroles/edit',
  },
  nonResource: {
    user: tim,
    verb: 'get',
    namespace: '',
    apiGroup: '',
    resource: '',
    subresource: '',
    name: '',
    isResourceRequest: false,
    path: '/logs/kubelet.log',
  },
  subresource: {
    user: tim,
    verb: 'get',
    namespace: 'default',
    apiGroup: '',
    resource: 'pods',
    subresource: 'log',
    name: 'busybox',
    isResourceRequest: true,
    path: '/api/v1/namespaces/default/pods/busybox',
  },
  Unauthorized: {
    user: undefined,
    verb: 'get',
    namespace: 'default',
    apiGroup: '',
    resource: 'pods',
    subresource: '',
    name: 'busybox',
    isResourceRequest: true,
    path: '/api/v1/namespaces/default/pods/busybox',
  },
};

const rules: Record<string, PolicyRule> = {
  default: { level: 'Metadata' },
  create: { level: 'Request', verbs: ['create'] },
  tims: { level: 'Metadata', users: ['tim@k8s.io'] },
  humans: { level: 'Metadata', userGroups: ['humans'] },
  serviceAccounts: { level: 'Request', userGroups: ['system:serviceaccounts'] },
  getPods: { level: 'RequestResponse', verbs: ['get'], resources: [{ resources: ['pods'] }] },
  getPodLogs: { level: 'Request', verbs: ['get'], resources: [{ resources: ['pods/log'] }] },
  getPodWildcardMatching: { level: 'Request', verbs: ['get'], resources: [{ resources: ['*'] }] },
  getPodResourceWildcardMatching: { level: 'Request', verbs: ['get'], resources: [{ resources: ['*/log'] }] },
  getPodSubResourceWildcardMatching: {
    level: 'Request',
    verbs: ['get'],
    resources: [{ resources: ['pods/*'] }],
  },
  getClusterRoles: {
    level: 'RequestResponse',
    verbs: ['get'],
    resources: [{ group: 'rbac.authorization.k8s.io', resources: ['clusterroles'] }],
    namespaces: [''],
  },
  getLogs: { level: 'RequestResponse', verbs: ['get'], nonResourceURLs: ['/logs*'] },
  getMetrics: { level: 'Request', verbs: ['get'], nonResourceURLs: ['/metrics'] },
  clusterRoleEdit: {
    level: 'Request',
    resources: [{ group: 'rbac.authorization.k8s.io', resources: ['clusterroles'], resourceNames: ['edit'] }],
  },
  'omit RequestReceived': { level: 'Request', omitStages: ['RequestReceived'] },
  'only audit panic': {
    level: 'Request',
    omitStages: ['RequestReceived', 'ResponseStarted', 'ResponseComplete'],
  },
};

/** [request, expected level, rule names in order] */
const levelCases: [string, Level, string[]][] = [
  ['namespaced', 'Metadata', ['default']],
  ['namespaced', 'None', ['create']],
  ['namespaced', 'Metadata', ['tims']],
  ['namespaced', 'Metadata', ['humans']],
  ['namespaced', 'None', ['serviceAccounts']],
  ['namespaced', 'RequestResponse', ['getPods']],
  ['namespaced', 'None', ['getClusterRoles']],
  ['namespaced', 'None', ['getLogs']],
  ['namespaced', 'None', ['getMetrics']],
  ['namespaced', 'Metadata', ['getMetrics', 'serviceAccounts', 'default']],
  ['namespaced', 'RequestResponse', ['getMetrics', 'getPods', 'default']],
  ['namespaced', 'RequestResponse', ['getPodLogs', 'getPods']],
  ['cluster', 'Metadata', ['default']],
  ['cluster', 'None', ['create']],
  ['cluster', 'Metadata', ['tims']],
  ['cluster', 'Metadata', ['humans']],
  ['cluster', 'None', ['serviceAccounts']],
  ['cluster', 'None', ['getPods']],
  ['cluster', 'RequestResponse', ['getClusterRoles']],
  ['cluster', 'Request', ['clusterRoleEdit', 'getClusterRoles']],
  ['cluster', 'None', ['getLogs']],
  ['cluster', 'None', ['getMetrics']],
  ['cluster', 'Metadata', ['getMetrics', 'serviceAccounts', 'default']],
  ['cluster', 'RequestResponse', ['getMetrics', 'getClusterRoles', 'default']],
  ['cluster', 'None', ['getPodLogs', 'getPods']],
  ['nonResource', 'Metadata', ['default']],
  ['nonResource', 'None', ['create']],
  ['nonResource', 'Metadata', ['tims']],
  ['nonResource', 'Metadata', ['humans']],
  ['nonResource', 'None', ['serviceAccounts']],
  ['nonResource', 'None', ['getPods']],
  ['nonResource', 'None', ['getClusterRoles']],
  ['nonResource', 'RequestResponse', ['getLogs']],
  ['nonResource', 'None', ['getMetrics']],
  ['nonResource', 'Metadata', ['getMetrics', 'serviceAccounts', 'default']],
  ['nonResource', 'RequestResponse', ['getLogs', 'getClusterRoles', 'default']],
  ['nonResource', 'None', ['getPodLogs', 'getPods']],
  ['subresource', 'Request', ['getPodLogs', 'getPods']],
  ['subresource', 'Request', ['getPodWildcardMatching']],
  ['subresource', 'Request', ['getPodResourceWildcardMatching']],
  ['subresource', 'Request', ['getPodSubResourceWildcardMatching']],
  ['Unauthorized', 'None', ['tims']],
  ['Unauthorized', 'Metadata', ['tims', 'default']],
  ['Unauthorized', 'None', ['humans']],
  ['Unauthorized', 'Metadata', ['humans', 'default']],
];

function evaluate(request: string, ruleNames: string[], policyStages?: Stage[]) {
  const checker = new PolicyChecker({
    rules: ruleNames.map((n) => rules[n] as PolicyRule),
    ...(policyStages ? { omitStages: policyStages } : {}),
  });
  return checker.evaluate(requests[request] as AuditAttributes);
}

describe('audit policy checker (upstream checker_test cases)', () => {
  for (const policyStages of [undefined, ['RequestReceived', 'ResponseStarted'] as Stage[]]) {
    for (const [request, level, names] of levelCases) {
      it(`${request} with [${names.join(',')}] is ${level}${policyStages ? ' (policy omits stages)' : ''}`, () => {
        const got = evaluate(request, names, policyStages);
        assert.equal(got.level, level);
        assert.deepEqual([...got.omitStages].sort(), [...(policyStages ?? [])].sort());
      });
    }
  }

  it("unions a rule's omitStages with the policy's", () => {
    assert.deepEqual(evaluate('namespaced', ['omit RequestReceived', 'getPods', 'default']).omitStages, [
      'RequestReceived',
    ]);
    assert.deepEqual(
      [
        ...evaluate('cluster', ['only audit panic', 'getPods'], ['RequestReceived', 'ResponseStarted'])
          .omitStages,
      ].sort(),
      ['RequestReceived', 'ResponseComplete', 'ResponseStarted'],
    );
    const nonResource = evaluate(
      'nonResource',
      ['default', 'omit RequestReceived'],
      ['RequestReceived', 'ResponseStarted'],
    );
    assert.equal(nonResource.level, 'Metadata');
    assert.deepEqual([...nonResource.omitStages].sort(), ['RequestReceived', 'ResponseStarted']);
  });

  it("lets a rule's omitManagedFields override the policy's", () => {
    const rule: PolicyRule = { level: 'RequestResponse', verbs: ['get'] };
    const attrs = requests.namespaced as AuditAttributes;
    const cases: [boolean | undefined, boolean | undefined, boolean][] = [
      [false, undefined, false],
      [true, undefined, true],
      [true, false, false],
      [false, true, true],
    ];
    for (const [policyValue, ruleValue, want] of cases) {
      const checker = new PolicyChecker({
        omitManagedFields: policyValue,
        rules: [ruleValue === undefined ? rule : { ...rule, omitManagedFields: ruleValue }],
      });
      assert.equal(checker.evaluate(attrs).omitManagedFields, want);
    }
  });
});

describe('audit policy loading', () => {
  it('reads a YAML policy', () => {
    const policy = loadPolicy(
      [
        'apiVersion: audit.k8s.io/v1',
        'kind: Policy',
        'omitStages: [RequestReceived]',
        'rules:',
        '- level: None',
        '  nonResourceURLs: ["/healthz*"]',
        '- level: Metadata',
        '  resources:',
        '  - group: management.platform.dev',
        '    resources: [sharedsecrets]',
      ].join('\n'),
    );
    assert.equal(policy.rules.length, 2);
    assert.deepEqual(policy.omitStages, ['RequestReceived']);
  });

  it("reports every invalid field in upstream's words", () => {
    assert.throws(
      () =>
        loadPolicy(
          JSON.stringify({
            apiVersion: 'audit.k8s.io/v1',
            kind: 'Policy',
            rules: [
              { level: '' },
              { level: 'Everything', nonResourceURLs: ['metrics', '/a*b'] },
              {
                level: 'None',
                resources: [{ group: 'Bad_Group', resourceNames: ['x'] }],
                omitStages: ['Later'],
              },
              { level: 'None', namespaces: ['a'], nonResourceURLs: ['/x'] },
            ],
          }),
        ),
      (err: Error) => {
        assert.match(err.message, /^\[rules\[0\]\.level: Required value, /);
        assert.match(
          err.message,
          /rules\[1\]\.level: Unsupported value: "Everything": supported values: "None", "Metadata", "Request", "RequestResponse"/,
        );
        assert.match(
          err.message,
          /rules\[1\]\.nonResourceURLs\[0\]: Invalid value: "metrics": non-resource URL rules must begin with a '\/' character/,
        );
        assert.match(
          err.message,
          /rules\[1\]\.nonResourceURLs\[1\]: Invalid value: "\/a\*b": non-resource URL wildcards '\*' must be the final character of the rule/,
        );
        assert.match(err.message, /rules\[2\]\.resources\.group: Invalid value: "Bad_Group": /);
        assert.match(
          err.message,
          /rules\[2\]\.resources\.resourceNames: Invalid value: \["x"\]: using resourceNames requires at least one resource/,
        );
        assert.match(
          err.message,
          /rules\[2\]\.omitStages\[0\]: Invalid value: "Later": allowed stages are RequestReceived,ResponseStarted,ResponseComplete,Panic/,
        );
        assert.match(
          err.message,
          /rules\[3\]\.nonResourceURLs: Invalid value: \["\/x"\]: rules cannot apply to both regular resources and non-resource URLs/,
        );
        return true;
      },
    );
  });

  it('refuses a policy without rules, of another kind, or with fields of the wrong type', () => {
    assert.throws(
      () => loadPolicy('apiVersion: audit.k8s.io/v1\nkind: Policy\n'),
      /^Error: loaded illegal policy with 0 rules$/,
    );
    assert.throws(
      () => loadPolicy('apiVersion: v1\nkind: ConfigMap\n'),
      /^Error: failed decoding: no kind "ConfigMap" is registered for version "v1"/,
    );
    assert.throws(
      () => loadPolicy('apiVersion: audit.k8s.io/v1\nkind: Policy\nrules:\n- level: None\n  users: alice\n'),
      /failed decoding: json: cannot unmarshal string into Go struct field PolicyRule\.rules\.users of type \[\]string/,
    );
  });

  it('names the file in its errors', () => {
    const dir = mkdtempSync(join(tmpdir(), 'audit-policy-'));
    const file = join(dir, 'policy.yaml');
    writeFileSync(file, 'apiVersion: audit.k8s.io/v1\nkind: Policy\nrules: []\n');
    assert.throws(() => loadPolicyFile(file), {
      message: `loading audit policy file: loaded illegal policy with 0 rules: from file ${file}`,
    });
    assert.throws(
      () => loadPolicyFile(join(dir, 'missing.yaml')),
      /^Error: loading audit policy file: failed to read file path ".*missing\.yaml": /,
    );
  });
});
