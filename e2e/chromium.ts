// Debian's chromium for the console's browser tests, driven by playwright-core (which
// downloads no browser): where it is, why a test file is skipped without it, and how
// it is started.

import { existsSync } from 'node:fs';
import { chromium, type Browser } from 'playwright-core';

export const CHROMIUM = '/usr/bin/chromium';

/** node:test's `skip` for a browser test file: false, or why it cannot run here. */
export const skipWithoutChromium: false | string = existsSync(CHROMIUM)
  ? false
  : `${CHROMIUM} is absent: run bash hack/ensure-test-deps.sh to install Debian's chromium`;

/** A headless chromium; its contexts must accept the test server's own CA (ignoreHTTPSErrors). */
export function launchChromium(): Promise<Browser> {
  return chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    // Containers often run as root, where chromium's sandbox cannot start.
    args: ['--no-sandbox'],
  });
}
