// Client certificates made by the kubeconfig subresource (clientCert: true) are
// signed by the host cluster's client CA and live as long as the signer allows
// (certificateTTL 0: about a year). Kubernetes itself cannot revoke such a
// certificate, but this server can refuse it: each one carries, as one extra
// organization (O, a group), the binding of the platform credentials it was made
// for, and the certificate is accepted here only while they would still be:
//
//   - the platform User named by the certificate's CN exists with the uid it had
//     when the certificate was made (not deleted, nor deleted and re-created under
//     the same name), is not being deleted, is not disabled, and has not bumped
//     tokenGeneration past the generation recorded;
//   - the access key the caller used, when it used one, still authenticates by the
//     access-key authenticator's own rules (AccessKeyUsability), with the same uid
//     and value: deleting, disabling, expiring or rotating the key ends it. Such a
//     certificate is tokenDerived: it may mint no credential that would outlive the
//     key (pkg/authorization/credential-minting.ts).
//
// The binding group reaches this server the same way however the certificate is
// presented: directly (the x509 authenticator reads O as groups) or through the
// host's aggregator (which authenticated it and forwards its groups as front-proxy
// headers). It is checked on both paths and removed from the caller's groups.
//
// A certificate of the host's client CA without a binding (made by hand on the
// host, or by this server before it bound them) whose CN names a platform User is
// refused while that User is disabled or being deleted, once its tokenGeneration is
// above 0 (as an access key made before keys recorded a generation is), and when
// the certificate's NotBefore is more than CSR_SIGNER_BACKDATE_MS earlier than the
// User's creationTimestamp: it was made before this User existed, so for another
// one of that name, deleted since (see that constant for the margin).
//
// An identity from the host's aggregator without a binding may be any host
// credential (a host token, the host's own certificate): when its name is a
// platform User's, it is refused while that User is disabled or being deleted,
// which hold whatever the credential; the generation and the NotBefore belong to
// a certificate, which the aggregator does not forward. Identities that name no
// platform User are the host's business, as before.

import type { IncomingMessage } from 'node:http';
import type { TLSSocket } from 'node:tls';

import { newUnauthorized } from '../apis/meta/errors.js';
import { isObject, type KubeObject } from '../apis/meta/types.js';
import { userTokenGeneration } from '../identity/token-generation.js';
import { credentialRefusal, type AccessKeyUsability } from './access-key-usability.js';
import { peerCertificateChain } from './front-proxy-x509.js';
import type { Awaitable } from '../util/awaitable.js';
import type { Authenticator } from './interfaces.js';
import type { AuthenticatedUser } from './user/user.js';

/** What a certificate was made for. */
export interface CertificateBinding {
  /** The caller's platform User when it was one: its uid and tokenGeneration then. */
  readonly user?: { readonly uid: string; readonly tokenGeneration: number };
  /** The access key the caller authenticated with, as a direct cluster endpoint token names it. */
  readonly accessKey?: { readonly name: string; readonly uid: string; readonly digest: string };
}

function bindingPrefix(apiGroup: string): string {
  return `${apiGroup}/certificate-binding:`;
}

/**
 * The group (a certificate's O) that carries the binding:
 * `<apiGroup>/certificate-binding:<user uid>:<generation>:<key name>:<key uid>:<key digest>`,
 * fields empty when absent. Names, uids and digests hold no colon.
 */
export function certificateBindingGroup(apiGroup: string, binding: CertificateBinding): string {
  const { user, accessKey } = binding;
  const fields = [
    user?.uid ?? '',
    user ? String(user.tokenGeneration) : '',
    accessKey?.name ?? '',
    accessKey?.uid ?? '',
    accessKey?.digest ?? '',
  ];
  return bindingPrefix(apiGroup) + fields.join(':');
}

/** True for a binding group of any platform server: a caller's own is never copied into a new certificate. */
export function isCertificateBindingGroup(group: string): boolean {
  return group.includes('/certificate-binding:');
}

/** The binding a group carries; null for a group that is no binding of this server; 'invalid' for a malformed one. */
export function parseCertificateBinding(
  apiGroup: string,
  group: string,
): CertificateBinding | null | 'invalid' {
  const prefix = bindingPrefix(apiGroup);
  if (!group.startsWith(prefix)) return null;
  const fields = group.slice(prefix.length).split(':');
  if (fields.length !== 5) return 'invalid';
  const [userUid = '', generation = '', keyName = '', keyUid = '', digest = ''] = fields;
  if ((userUid === '') !== (generation === '') || (generation !== '' && !/^\d+$/.test(generation)))
    return 'invalid';
  if (!((keyName === '' && keyUid === '' && digest === '') || (keyName && keyUid && digest)))
    return 'invalid';
  if (userUid === '' && keyName === '') return 'invalid';
  return {
    ...(userUid ? { user: { uid: userUid, tokenGeneration: Number(generation) } } : {}),
    ...(keyName ? { accessKey: { name: keyName, uid: keyUid, digest } } : {}),
  };
}

/**
 * How far a certificate's NotBefore may precede its User's creation. Signers
 * backdate: kube-controller-manager's CSR signer sets NotBefore to the signing time
 * less 5 minutes (pkg/controller/certificates/authority, PermissiveSigningPolicy
 * with Backdate 5m, against clock skew), so a certificate requested for a User
 * right after its creation starts up to 5 minutes before it. Exactly that margin,
 * not more: NotBefore >= creation - 5 min passes.
 *
 * What the margin exposes: an unbound certificate made for an earlier User of the
 * same name in the 5 minutes before the new User was created speaks for the new
 * one. That is acceptable because the rule never was a defence against the host's
 * CA (whoever can have it sign CN=<name> can do so after the re-creation as well);
 * it retires certificates that are older than the User, and a certificate of the
 * deleted User's last 5 minutes is at most 5 minutes older than the margin lets
 * through. Where even that matters, it is closed otherwise: the new User created
 * with `spec.tokenGeneration: 1` refuses every unbound certificate (their recorded
 * generation is 0), or the name waits 5 minutes before it is re-created.
 * Certificates of the kube config subresource are bound to the User's uid and get
 * no margin at all.
 */
export const CSR_SIGNER_BACKDATE_MS = 5 * 60_000;

function isDisabled(user: KubeObject): boolean {
  return isObject(user['spec']) && user['spec']['disabled'] === true;
}

/**
 * Wraps the authenticators that see host identities (front proxy, x509): an
 * identity with a binding, or naming a platform User, is checked as the file
 * comment says; a 401 when it must not authenticate.
 */
export class CertificateBindingAuthenticator implements Authenticator {
  constructor(
    private readonly inner: Authenticator,
    private readonly options: {
      readonly apiGroup: string;
      /** The access-key authenticator's checks and identity cache. */
      readonly keys: AccessKeyUsability;
      /** True for the x509 authenticator: its identities are certificates even without a binding. */
      readonly certificates: boolean;
    },
  ) {}

  authenticate(req: IncomingMessage): Awaitable<AuthenticatedUser | null> {
    const found = this.inner.authenticate(req);
    return found instanceof Promise ? found.then((u) => this.checked(u, req)) : this.checked(found, req);
  }

  private checked(user: AuthenticatedUser | null, req: IncomingMessage): Awaitable<AuthenticatedUser | null> {
    if (!user) return null;
    const { apiGroup, keys } = this.options;
    const prefix = bindingPrefix(apiGroup);
    // Most identities (every one the aggregator forwards for a host credential) carry
    // no binding: one prefix test per group and one look-up of the User, no parsing.
    if (!user.groups.some((g) => g.startsWith(prefix))) {
      if (!keys.source.hasSynced) return keys.whenSynced().then(() => this.unbound(user, req));
      return this.unbound(user, req);
    }
    const bindings = user.groups.map((g) => parseCertificateBinding(apiGroup, g));
    if (!keys.source.hasSynced) return keys.whenSynced().then(() => this.check(user, bindings, req));
    return this.check(user, bindings, req);
  }

  private unbound(user: AuthenticatedUser, req: IncomingMessage): AuthenticatedUser {
    this.checkUnbound(user.name, req);
    return user;
  }

  private check(
    user: AuthenticatedUser,
    bindings: ReadonlyArray<CertificateBinding | null | 'invalid'>,
    req: IncomingMessage,
  ): AuthenticatedUser {
    const present = bindings.filter((b) => b !== null);
    if (present.length > 1 || present[0] === 'invalid') {
      throw newUnauthorized(
        `the client certificate of "${user.name}" carries an invalid platform binding; request a new kube config`,
      );
    }
    const binding = present[0];
    if (binding) this.checkBinding(user.name, binding);
    else this.checkUnbound(user.name, req);
    if (!binding) return user;
    const groups = user.groups.filter((_, i) => bindings[i] === null);
    // Made with an access key, the certificate lives only as long as the key: what
    // it could mint (a kube config bound to the User alone, a key, a token) would
    // not, so it mints nothing, as a direct cluster endpoint token does not.
    return binding.accessKey ? { ...user, groups, tokenDerived: true } : { ...user, groups };
  }

  private checkBinding(name: string, binding: CertificateBinding): void {
    const { source } = this.options.keys;
    if (binding.user) {
      const user = source.user(name);
      if (!user || user.metadata.uid !== binding.user.uid || user.metadata.deletionTimestamp) {
        throw newUnauthorized(
          `the user "${name}" this client certificate was made for no longer exists; ask an administrator, then request a new kube config`,
        );
      }
      this.checkUserState(name, user, binding.user.tokenGeneration);
    }
    if (binding.accessKey) this.checkKey(binding.accessKey);
  }

  private checkUnbound(name: string, req: IncomingMessage): void {
    const user = this.options.keys.source.user(name);
    if (!user) return;
    if (user.metadata.deletionTimestamp) {
      throw newUnauthorized(
        `the user "${name}" is being deleted; ask an administrator, then request a new kube config`,
      );
    }
    if (!this.options.certificates) {
      if (isDisabled(user)) {
        throw newUnauthorized(`the user "${name}" is disabled; ask an administrator to enable the user`);
      }
      return;
    }
    const socket = req.socket as TLSSocket | undefined;
    const notBefore = Date.parse((socket && peerCertificateChain(socket)[0]?.validFrom) ?? '');
    const created = Date.parse(user.metadata.creationTimestamp ?? '');
    // Unknown either way: refuse, as the binding would have told which User it was for.
    if (!(notBefore >= created - CSR_SIGNER_BACKDATE_MS)) {
      throw newUnauthorized(
        `this client certificate was made before the user "${name}" was created, for a user of that name deleted since; request a new kube config`,
      );
    }
    this.checkUserState(name, user, 0);
  }

  private checkUserState(name: string, user: KubeObject, generation: number): void {
    if (isDisabled(user)) {
      throw newUnauthorized(`the user "${name}" is disabled; ask an administrator to enable the user`);
    }
    if (userTokenGeneration(user) > generation) {
      throw newUnauthorized(
        `this client certificate was revoked: the tokens of user "${name}" were invalidated; request a new kube config`,
      );
    }
  }

  private checkKey(claim: NonNullable<CertificateBinding['accessKey']>): void {
    const { keys } = this.options;
    const key = keys.source.accessKey(claim.name);
    if (!key || key.metadata.uid !== claim.uid) {
      throw newUnauthorized(
        `the access key "${claim.name}" this client certificate was made with no longer exists; request a new kube config with a working key`,
      );
    }
    if (keys.digest(key) !== claim.digest) {
      throw newUnauthorized(
        `the access key "${claim.name}" was rotated since this client certificate was made; request a new kube config with its new value`,
      );
    }
    try {
      keys.check(key);
    } catch (err) {
      throw credentialRefusal('this client certificate', err);
    }
  }
}
