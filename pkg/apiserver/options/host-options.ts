// The host cluster this server is aggregated into, and where the first
// administrator's key goes when there is one (issue 3).

import { parseNamespacedName } from '../../apis/meta/namespaced-name.js';
import type { OptionGroup } from './option-group.js';
import { fileProblems } from './validation.js';

export interface HostOptionValues {
  /** Kube config of the host cluster ('' = in-cluster service account, or none outside a cluster). */
  hostKubeconfig: string;
  /** Host Secret `<ns>/<name>` the bootstrap admin key is written to ('' = the admin kube config file). */
  bootstrapSecret: string;
}

export const hostOptions = {
  title: 'Host cluster flags',
  flags: [
    {
      name: 'host-kubeconfig',
      field: 'hostKubeconfig',
      kind: 'string',
      usage:
        'Kube config of the host cluster (TokenReview, SubjectAccessReview, the front-proxy ConfigMap, Secrets, CSRs). Empty: the service account when running in a pod, else no host cluster.',
      default: '',
    },
    {
      name: 'bootstrap-secret',
      field: 'bootstrapSecret',
      kind: 'string',
      usage:
        "Host Secret <namespace>/<name> that receives the first administrator's access key (key accessKey) instead of <data-dir>/admin.kubeconfig, when a host cluster is configured.",
      default: '',
    },
  ],
  complete() {},
  validate(v) {
    const errs = fileProblems([['--host-kubeconfig', v.hostKubeconfig]]);
    if (v.bootstrapSecret !== '' && !parseNamespacedName(v.bootstrapSecret)) {
      errs.push(
        `--bootstrap-secret: "${v.bootstrapSecret}" must be <namespace>/<name> (a namespace and a Secret name in lower case)`,
      );
    }
    return errs;
  },
} satisfies OptionGroup<HostOptionValues>;
