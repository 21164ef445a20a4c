export type * from './types.js';
export { HostClusterError, isHostAlreadyExists, isHostConflict, isHostNotFound } from './errors.js';
export { KubeHostCluster, type KubeHostClusterOptions } from './client.js';
export { loadHostCluster, inCluster, SERVICE_ACCOUNT_DIR, type LoadHostClusterOptions } from './load.js';
export {
  createCertificateRequest,
  parseCertificateRequest,
  CertificateRequestError,
  type ParsedCertificateRequest,
} from './certificate-request.js';
export {
  requestClientCertificate,
  waitForCertificate,
  CertificateSigningError,
  type CertificateSigningFailure,
  type ClientCertificate,
  type ClientCertificateOptions,
} from './client-certificate.js';
