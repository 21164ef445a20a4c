// The host cluster through @kubernetes/client-node, from a kube config (the
// user's, for the command-line client). Create-or-replace is create, then on 409 a
// read for the current resourceVersion and a replace, so a concurrent writer gets
// a conflict instead of being silently overwritten.

import type { KubeConfig } from '@kubernetes/client-node';
import { ApiException, CoreV1Api, RbacAuthorizationV1Api } from '@kubernetes/client-node';
import type { SecretObject } from './connection-secret.js';
import type { ApplyResult, ConnectionHost } from './host.js';
import { HostError, HostForbiddenError } from './host.js';
import type { RoleBindingObject, RoleObject } from './rbac.js';

function statusOf(err: unknown): number | undefined {
  return err instanceof ApiException ? (err.code as number) : undefined;
}

/** The Status message of a failed call, or the transport error's own message. */
function messageOf(err: unknown): string {
  if (err instanceof ApiException) {
    const raw: unknown = err.body;
    let body: unknown = raw;
    if (typeof raw === 'string') {
      try {
        body = JSON.parse(raw) as unknown;
      } catch {
        return raw.slice(0, 200) || `HTTP ${String(err.code)}`;
      }
    }
    if (body && typeof body === 'object' && 'message' in body && typeof body.message === 'string') {
      return body.message;
    }
    return `HTTP ${String(err.code)}`;
  }
  if (err instanceof Error) {
    const code = (err as NodeJS.ErrnoException).code;
    return code && !err.message.includes(code) ? `${err.message} (${code})` : err.message;
  }
  return String(err);
}

function hostError(what: string, err: unknown, server: string): Error {
  const status = statusOf(err);
  if (status === 403) return new HostForbiddenError(messageOf(err));
  if (status === undefined)
    return new HostError(`cannot reach the host cluster at ${server} to ${what}: ${messageOf(err)}`);
  return new HostError(`the host cluster refused to ${what}: ${messageOf(err)}`);
}

export class KubeConnectionHost implements ConnectionHost {
  private readonly core: CoreV1Api;
  private readonly rbac: RbacAuthorizationV1Api;
  private readonly server: string;

  constructor(kubeConfig: KubeConfig) {
    this.core = kubeConfig.makeApiClient(CoreV1Api);
    this.rbac = kubeConfig.makeApiClient(RbacAuthorizationV1Api);
    this.server = kubeConfig.getCurrentCluster()?.server ?? '(no server)';
  }

  async readSecret(namespace: string, name: string): Promise<Record<string, string> | undefined> {
    try {
      const secret = await this.core.readNamespacedSecret({ namespace, name });
      const out: Record<string, string> = {};
      for (const [k, v] of Object.entries(secret.data ?? {}))
        out[k] = Buffer.from(v, 'base64').toString('utf8');
      return out;
    } catch (err) {
      if (statusOf(err) === 404) return undefined;
      throw hostError(`read secret ${namespace}/${name}`, err, this.server);
    }
  }

  async applySecret(secret: SecretObject): Promise<ApplyResult> {
    const { namespace, name } = secret.metadata;
    return this.apply(
      `write secret ${namespace}/${name}`,
      () => this.core.createNamespacedSecret({ namespace, body: secret }),
      async () => {
        const current = await this.core.readNamespacedSecret({ namespace, name });
        const body = {
          ...secret,
          metadata: { ...secret.metadata, resourceVersion: current.metadata?.resourceVersion },
        };
        await this.core.replaceNamespacedSecret({ namespace, name, body });
      },
    );
  }

  async applyRole(role: RoleObject): Promise<ApplyResult> {
    const { namespace, name } = role.metadata;
    return this.apply(
      `write role ${namespace}/${name}`,
      () => this.rbac.createNamespacedRole({ namespace, body: role }),
      async () => {
        const current = await this.rbac.readNamespacedRole({ namespace, name });
        const body = {
          ...role,
          metadata: { ...role.metadata, resourceVersion: current.metadata?.resourceVersion },
        };
        await this.rbac.replaceNamespacedRole({ namespace, name, body });
      },
    );
  }

  async applyRoleBinding(binding: RoleBindingObject): Promise<ApplyResult> {
    const { namespace, name } = binding.metadata;
    return this.apply(
      `write role binding ${namespace}/${name}`,
      () => this.rbac.createNamespacedRoleBinding({ namespace, body: binding }),
      async () => {
        const current = await this.rbac.readNamespacedRoleBinding({ namespace, name });
        const body = {
          ...binding,
          metadata: { ...binding.metadata, resourceVersion: current.metadata?.resourceVersion },
        };
        await this.rbac.replaceNamespacedRoleBinding({ namespace, name, body });
      },
    );
  }

  private async apply(
    what: string,
    create: () => Promise<unknown>,
    replace: () => Promise<void>,
  ): Promise<ApplyResult> {
    try {
      await create();
      return 'created';
    } catch (err) {
      if (statusOf(err) !== 409) throw hostError(what, err, this.server);
    }
    try {
      await replace();
      return 'updated';
    } catch (err) {
      throw hostError(what, err, this.server);
    }
  }
}
