// The host double's stand-in for the certificates.k8s.io/v1 CertificateSigningRequest
// API: kube-apiserver's validation of a new request and of updates to it and to its
// status and approval subresources (its 422 wording), and the signing controller's
// step for an approved request (kube-controller-manager), with the signer behaviour a
// test sets. The double keeps the objects and calls these.

import { CsrReadError, readCertificateRequest } from './csr-reader.js';
import { signCertificateRequest } from './csr-signer.js';
import { StatusError } from './host-errors.js';
import { asRecord } from './host-http.js';
import type { DoubleUser } from './host-reviews.js';
import type { StoredObject } from './object-store.js';
import type { CertificateAuthority } from './pki.js';

/**
 * What happens to requests for a signer: `sign` approved ones, `fail` them (Failed
 * condition), `ignore` them (no signer answers), or `deny` every new request at
 * once, as an approving controller with a policy would (so approving it fails).
 */
export type SignerBehaviour = 'sign' | 'fail' | 'ignore' | 'deny';

/**
 * kube-apiserver's create of a CertificateSigningRequest: validation (422 with its
 * wording), then the requester recorded from the caller, never from the body.
 */
export function prepareCertificateSigningRequest(obj: StoredObject, user: DoubleUser): void {
  const spec = asRecord(obj.spec);
  const errs: string[] = [];
  const request = typeof spec.request === 'string' ? spec.request : '';
  if (request === '') errs.push('spec.request: Required value');
  else {
    try {
      readCertificateRequest(Buffer.from(request, 'base64').toString('utf8'));
    } catch (err) {
      if (!(err instanceof CsrReadError)) throw err;
      errs.push(`spec.request: Invalid value: []byte{...}: ${err.message}`);
    }
  }
  if (typeof spec.signerName !== 'string' || spec.signerName === '')
    errs.push('spec.signerName: Required value');
  if (!Array.isArray(spec.usages) || spec.usages.length === 0) errs.push('spec.usages: Required value');
  const exp = spec.expirationSeconds;
  if (exp !== undefined && (typeof exp !== 'number' || exp < 600))
    errs.push(
      `spec.expirationSeconds: Invalid value: ${String(exp)}: may not specify a duration less than 600 seconds (10 minutes)`,
    );
  if (errs.length > 0)
    throw new StatusError(
      422,
      'Invalid',
      `CertificateSigningRequest.certificates.k8s.io "${obj.metadata.name}" is invalid: ${errs.length === 1 ? errs[0] : `[${errs.join(', ')}]`}`,
    );
  // Who asked is recorded by the API server, never taken from the client.
  obj.spec = {
    ...spec,
    username: user.username,
    groups: [...(user.groups ?? [])],
    ...(user.uid ? { uid: user.uid } : {}),
    ...(user.extra ? { extra: user.extra } : {}),
  };
  obj.status = {};
}

/** An update of the main resource, `status` or `approval`, as kube-apiserver's strategies allow it. */
export function updateCertificateSigningRequest(
  current: StoredObject,
  subresource: string,
  body: Record<string, unknown>,
): StoredObject {
  const meta = asRecord(body.metadata);
  if (subresource === '') {
    // The main resource only takes metadata changes: spec is immutable and status has its own endpoints.
    return {
      ...current,
      metadata: { ...current.metadata, labels: meta.labels, annotations: meta.annotations },
    } as StoredObject;
  }
  const currentStatus = asRecord(current.status);
  const bodyStatus = asRecord(body.status);
  if (subresource === 'status') return { ...current, status: bodyStatus };

  // approval: only conditions change; Approved and Denied are exclusive and, once set, stay.
  const conditions = (Array.isArray(bodyStatus.conditions) ? bodyStatus.conditions : []).map((c) => {
    const cond = asRecord(c);
    const now = new Date().toISOString().replace(/\.\d+Z$/, 'Z');
    return {
      ...cond,
      lastUpdateTime: cond.lastUpdateTime ?? now,
      lastTransitionTime: cond.lastTransitionTime ?? now,
    };
  });
  const has = (list: unknown[], type: string): boolean =>
    list.some((c) => asRecord(c).type === type && asRecord(c).status === 'True');
  const before = Array.isArray(currentStatus.conditions) ? currentStatus.conditions : [];
  const errs: string[] = [];
  if (has(conditions, 'Approved') && has(conditions, 'Denied'))
    errs.push(
      'status.conditions[1].type: Invalid value: "Denied": Approved and Denied conditions are mutually exclusive',
    );
  for (const type of ['Approved', 'Denied'])
    if (has(before, type) && !has(conditions, type))
      errs.push(`status.conditions: Forbidden: updates may not remove a condition of type "${type}"`);
  if (errs.length > 0)
    throw new StatusError(
      422,
      'Invalid',
      `CertificateSigningRequest.certificates.k8s.io "${current.metadata.name}" is invalid: ${errs.join(', ')}`,
    );
  return { ...current, status: { ...currentStatus, conditions } };
}

/**
 * The signing controller's step for one request: the request with a certificate or a
 * Failed condition, or undefined when there is nothing to do (not approved, already
 * settled, or a signer that does not sign).
 */
export function signApprovedRequest(
  csr: StoredObject,
  behaviourOf: (signerName: string) => SignerBehaviour | undefined,
  clientCa: CertificateAuthority,
  maxDurationSeconds: number,
): StoredObject | undefined {
  const spec = asRecord(csr.spec);
  const status = asRecord(csr.status);
  const conditions = Array.isArray(status.conditions) ? (status.conditions as unknown[]) : [];
  const has = (type: string): boolean =>
    conditions.some((c) => asRecord(c).type === type && asRecord(c).status === 'True');
  if (!has('Approved') || has('Denied') || has('Failed') || typeof status.certificate === 'string')
    return undefined;
  const signerName = typeof spec.signerName === 'string' ? spec.signerName : '';
  const behaviour = behaviourOf(signerName) ?? 'ignore';
  if (behaviour === 'ignore' || behaviour === 'deny') return undefined;
  const outcome =
    behaviour === 'fail'
      ? ({ kind: 'failed', reason: 'SignerFailure', message: 'the signer failed (test double)' } as const)
      : signCertificateRequest(
          clientCa,
          {
            signerName,
            requestPem: Buffer.from(String(spec.request ?? ''), 'base64').toString('utf8'),
            usages: Array.isArray(spec.usages)
              ? spec.usages.filter((u): u is string => typeof u === 'string')
              : [],
            ...(typeof spec.expirationSeconds === 'number'
              ? { expirationSeconds: spec.expirationSeconds }
              : {}),
          },
          { maxDurationSeconds },
        );
  const next =
    outcome.kind === 'issued'
      ? { ...status, certificate: Buffer.from(outcome.certificatePem, 'utf8').toString('base64') }
      : { ...status, conditions: [...conditions, condition('Failed', outcome.reason, outcome.message)] };
  return { ...csr, status: next };
}

function condition(type: string, reason: string, message: string): Record<string, string> {
  const now = new Date().toISOString().replace(/\.\d+Z$/, 'Z');
  return { type, status: 'True', reason, message, lastUpdateTime: now, lastTransitionTime: now };
}

/** The request with a Denied condition added, as `kubectl certificate deny` leaves it. */
export function withDeniedCondition(csr: StoredObject, reason: string, message: string): StoredObject {
  const status = asRecord(csr.status);
  const conditions = Array.isArray(status.conditions) ? [...(status.conditions as unknown[])] : [];
  conditions.push(condition('Denied', reason, message));
  return { ...csr, status: { ...status, conditions } };
}
