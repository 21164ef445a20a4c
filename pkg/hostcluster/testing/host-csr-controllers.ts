// The controllers that act on CertificateSigningRequests in a real cluster, as far
// as the host double plays them: an approving controller with a policy (which may
// deny a new request at once), an administrator's `kubectl certificate deny`, and
// kube-controller-manager's signing controller, which looks at a request after each
// update and issues (or fails) it per the behaviour a test set for its signer.

import { signApprovedRequest, withDeniedCondition, type SignerBehaviour } from './host-csr.js';
import { asRecord } from './host-http.js';
import type { ObjectStore, StoredObject } from './object-store.js';
import type { CertificateAuthority } from './pki.js';

const RESOURCE = 'certificatesigningrequests';

export class CertificateControllers {
  private readonly behaviour = new Map<string, SignerBehaviour>();

  constructor(
    private readonly store: ObjectStore,
    /** The CA the kube-apiserver-client signer issues from. */
    private readonly signingCa: CertificateAuthority,
    private readonly maxSigningDurationSeconds: number,
    signers: readonly string[],
  ) {
    for (const signer of signers) this.behaviour.set(signer, 'sign');
  }

  setBehaviour(signerName: string, behaviour: SignerBehaviour): void {
    this.behaviour.set(signerName, behaviour);
  }

  /** Adds a Denied condition, as `kubectl certificate deny` would. */
  deny(name: string, reason: string, message: string): void {
    const csr = this.store.get(RESOURCE, '', name);
    if (!csr) throw new Error(`no certificate signing request ${name}`);
    this.store.update(RESOURCE, withDeniedCondition(csr, reason, message));
  }

  /** After a create: the approval policy denies new requests for a signer set to `deny`. */
  created(resource: string, created: StoredObject): void {
    const signerName = String(asRecord(created.spec).signerName);
    if (resource === RESOURCE && this.behaviour.get(signerName) === 'deny')
      this.deny(created.metadata.name, 'PolicyDenied', 'denied by the approval policy (test double)');
  }

  /** After an update: the signing controller looks at the request once the update is answered. */
  updated(resource: string, name: string): void {
    if (resource === RESOURCE) setImmediate(() => this.sign(name));
  }

  private sign(name: string): void {
    const csr = this.store.get(RESOURCE, '', name);
    if (!csr) return;
    const next = signApprovedRequest(
      csr,
      (signer) => this.behaviour.get(signer),
      this.signingCa,
      this.maxSigningDurationSeconds,
    );
    if (next) this.store.update(RESOURCE, next);
  }
}
