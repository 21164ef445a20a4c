// The kube config document (clientcmd/api/v1) as kubectl and client libraries read
// it. Field names are the serialized (kebab-case) ones on purpose: these types
// describe the file, not an in-memory model, so serialization is a plain dump.

export interface KubeConfigCluster {
  server: string;
  /** Base64 of the PEM bundle of CAs that sign the server's certificate. */
  'certificate-authority-data'?: string;
  'insecure-skip-tls-verify'?: boolean;
  'tls-server-name'?: string;
}

export interface KubeConfigUser {
  token?: string;
  /** Base64 of a PEM client certificate (and its key below). */
  'client-certificate-data'?: string;
  'client-key-data'?: string;
}

export interface KubeConfigContext {
  cluster: string;
  user: string;
  namespace?: string;
}

export interface NamedCluster {
  name: string;
  cluster: KubeConfigCluster;
}

export interface NamedUser {
  name: string;
  user: KubeConfigUser;
}

export interface NamedContext {
  name: string;
  context: KubeConfigContext;
}

export interface KubeConfig {
  apiVersion: 'v1';
  kind: 'Config';
  clusters: NamedCluster[];
  users: NamedUser[];
  contexts: NamedContext[];
  'current-context': string;
  preferences: Record<string, never>;
}
