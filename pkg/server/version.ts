// What /version reports, in kube-apiserver's shape (version.Info), because kubectl and
// client libraries read it: `kubectl version` warns when the server's major/minor is
// more than one minor away from its own, and some clients gate features on it. The
// server is not Kubernetes, and says so, but it implements a Kubernetes API level:
//   major/minor  the Kubernetes API level whose behaviour it implements and is tested
//                against (KUBERNETES_API_LEVEL: aggregated discovery v2, the
//                self-service reviews, kubectl 1.32's requests), as other API servers
//                built on a Kubernetes release report that release's level;
//   gitVersion   `v<level>.0+platform.<version>`: a valid semantic version whose
//                build metadata names the platform and its own version (package.json),
//                the way k3s reports `v1.32.4+k3s1`;
// and the commit and build date from the environment a build sets
// (PLATFORM_GIT_COMMIT, PLATFORM_BUILD_DATE), when it sets them.

import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { VersionInfo } from '../apiserver/config.js';

function packageVersion(): string {
  // Walk up from this module: the depth differs between the sources and dist/.
  let dir = dirname(fileURLToPath(import.meta.url));
  for (let i = 0; i < 6; i++) {
    try {
      const pkg = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as {
        name?: unknown;
        version?: unknown;
      };
      if (pkg.name === 'platform-apiserver' && typeof pkg.version === 'string') return pkg.version;
    } catch {
      // not here; keep walking
    }
    dir = dirname(dir);
  }
  return '0.0.0';
}

const GOARCH: Readonly<Record<string, string>> = { x64: 'amd64', ia32: '386', arm64: 'arm64', arm: 'arm' };

/** The Kubernetes API level this server implements (see above): bump with the kubectl it is tested against. */
export const KUBERNETES_API_LEVEL = { major: '1', minor: '32' } as const;

export function versionInfo(env: NodeJS.ProcessEnv = process.env): VersionInfo {
  const version = packageVersion();
  const { major, minor } = KUBERNETES_API_LEVEL;
  const commit = env.PLATFORM_GIT_COMMIT ?? '';
  return {
    major,
    minor,
    gitVersion: `v${major}.${minor}.0+platform.${version}`,
    gitCommit: commit,
    gitTreeState: commit ? 'clean' : '',
    buildDate: env.PLATFORM_BUILD_DATE ?? '',
    goVersion: `node${process.versions.node}`,
    compiler: 'tsc',
    platform: `${process.platform}/${GOARCH[process.arch] ?? process.arch}`,
  };
}
