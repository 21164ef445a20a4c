// TEST DOUBLES for the host cluster: an in-process HTTPS double of its API and the
// certificate helpers tests need. Never imported by production code.
export * from './host-double.js';
export * from './host-reviews.js';
export type { SignerBehaviour } from './host-csr.js';
export * from './pki.js';
export { KUBE_APISERVER_CLIENT_SIGNER, signCertificateRequest } from './csr-signer.js';
