// What user impersonation costs a request, in one process, rounds alternating
// (A, B, A, B, ...; the order reversed every other round), medians reported as CPU
// microseconds per request (process.cpuUsage over the window) beside requests/s:
//
//   1. the test every request now pays, hasImpersonationHeaders(), on kubectl's
//      eight request headers, against the same loop without it;
//   2. the authorizer chain of a get (minting, scope, then an allowing rule) with
//      and without the ImpersonationAuthorizer, which every chain now asks second
//      (one verb comparison when the verb is not `impersonate`);
//   3. for scale, a whole impersonation (Impersonate-User and one group, each
//      allowed at once, the identity built and the headers removed).
//
// Bounded in time, no network, no server.
// Run: npx tsc -p tsconfig.build.json && node dist/hack/bench/impersonation-cost.js [calls-per-round] [rounds]

import type { IncomingMessage } from 'node:http';

import { hasImpersonationHeaders, impersonate } from '../../pkg/apiserver/filters/impersonation.js';
import type { AuthenticatedUser } from '../../pkg/authentication/user/user.js';
import type { CallerResolver } from '../../pkg/authorization/caller.js';
import { AuthorizerChain } from '../../pkg/authorization/chain.js';
import { CredentialMintingAuthorizer } from '../../pkg/authorization/credential-minting.js';
import { ImpersonationAuthorizer } from '../../pkg/authorization/impersonation.js';
import { ALLOWED, type Attributes, type Authorizer } from '../../pkg/authorization/interfaces.js';
import { ScopeAuthorizer } from '../../pkg/authorization/scope.js';
import type { IdentityCache } from '../../pkg/identity/identity-cache.js';
import { compareAlternating, type Variant } from './alternating-ab.js';

const GROUP = 'management.platform.dev';
const CALLS = Number(process.argv[2] ?? 500_000);
const ROUNDS = Number(process.argv[3] ?? 7);

/** The header lines kubectl 1.32 sends with a get. */
const KUBECTL_HEADERS = [
  'Host',
  '127.0.0.1:6443',
  'User-Agent',
  'kubectl/v1.32.4 (linux/amd64) kubernetes/59526cd',
  'Accept',
  'application/json;as=Table;v=v1;g=meta.k8s.io,application/json;as=Table;v=v1beta1;g=meta.k8s.io,application/json',
  'Authorization',
  'Bearer <redacted>',
  'Kubectl-Command',
  'kubectl get',
  'Kubectl-Session',
  '2b3d9c1e-4f1a-4b8e-9c3d-5e6f7a8b9c0d',
  'Accept-Encoding',
  'gzip',
  'Connection',
  'keep-alive',
];

function request(raw: readonly string[]): IncomingMessage {
  const headers: Record<string, string> = {};
  const headersDistinct: Record<string, string[]> = {};
  for (let i = 0; i < raw.length; i += 2) {
    const name = raw[i]!.toLowerCase();
    headers[name] = raw[i + 1]!;
    (headersDistinct[name] ??= []).push(raw[i + 1]!);
  }
  return { rawHeaders: [...raw], headers, headersDistinct } as unknown as IncomingMessage;
}

const user: AuthenticatedUser = { name: 'alice', groups: ['system:authenticated'], accessKeyName: 'k' };
const get: Attributes = {
  user,
  verb: 'get',
  isResourceRequest: true,
  path: `/apis/${GROUP}/v1/users/alice`,
  apiGroup: GROUP,
  apiVersion: 'v1',
  resource: 'users',
  subresource: '',
  namespace: '',
  name: 'alice',
};
const allowing: Authorizer = { authorize: () => ALLOWED };
const minting = new CredentialMintingAuthorizer(GROUP);
const scope = new ScopeAuthorizer({ group: GROUP, collections: 'lenient' });
// Never consulted for a verb other than `impersonate`: a look-up would throw here.
const impersonation = new ImpersonationAuthorizer({} as CallerResolver, {} as IdentityCache);
const chainWithout = new AuthorizerChain([minting, scope, allowing]);
const chainWith = new AuthorizerChain([minting, impersonation, scope, allowing]);

const kubectlGet = request(KUBECTL_HEADERS);
let sink = 0;

const comparisons: ReadonlyArray<readonly [Variant, Variant]> = [
  [
    ['header loop, no test', () => (sink += kubectlGet.rawHeaders.length)],
    [
      'header loop + hasImpersonationHeaders',
      () => (sink += kubectlGet.rawHeaders.length + (hasImpersonationHeaders(kubectlGet) ? 1 : 0)),
    ],
  ],
  [
    ['chain without impersonation rule', () => void chainWithout.authorize(get)],
    ['chain with impersonation rule', () => void chainWith.authorize(get)],
  ],
  [
    ['no impersonation (the test only)', () => (sink += hasImpersonationHeaders(kubectlGet) ? 1 : 0)],
    [
      'impersonating bob + 1 group',
      () => {
        const req = request([...KUBECTL_HEADERS, 'Impersonate-User', 'bob', 'Impersonate-Group', 'qa']);
        const served = impersonate(allowing, { req, user, audit: undefined });
        if (served instanceof Promise) throw new Error('expected a synchronous answer');
        sink += served.groups.length;
      },
    ],
  ],
];

compareAlternating(comparisons, CALLS, ROUNDS, 'request', 40);
if (sink === -1) console.log(sink);
