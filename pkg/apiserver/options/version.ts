// What /version reports. The numbers come from package.json so a release only
// bumps one place; the commit and build date from the environment a build sets
// (PLATFORM_GIT_COMMIT, PLATFORM_BUILD_DATE), when it sets them.

import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { VersionInfo } from '../config.js';

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

export function versionInfo(env: NodeJS.ProcessEnv = process.env): VersionInfo {
  const version = packageVersion();
  const [major = '0', minor = '0'] = version.split('.');
  const commit = env.PLATFORM_GIT_COMMIT ?? '';
  return {
    major,
    minor,
    gitVersion: `v${version}`,
    gitCommit: commit,
    gitTreeState: commit ? 'clean' : '',
    buildDate: env.PLATFORM_BUILD_DATE ?? '',
    goVersion: `node${process.versions.node}`,
    compiler: 'tsc',
    platform: `${process.platform}/${GOARCH[process.arch] ?? process.arch}`,
  };
}
