// The console's live detail page when the server side cuts its watch mid-stream, in
// Debian's chromium (driven by playwright-core) against a started server. The browser
// reaches the server through a TCP proxy the test controls (tcp-proxy.ts; TLS passes
// through it unchanged): once the page's watch has delivered an event, the proxy
// resets every connection, the watch's among them (HTTP/1.1: the watch has a
// connection of its own), and the team is changed. What a user would notice is
// checked: the page says "Reconnecting…", comes back "Live" and shows the change
// without a reload; and, as client-go's reflector, it resumed the watch from the last
// resourceVersion it saw (no new read) after its backoff, leaving exactly one watch
// open on the server, which leaving the page closes.
//
// Skipped only when /usr/bin/chromium is absent (hack/ensure-test-deps.sh installs it).

import assert from 'node:assert/strict';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { Browser, Page } from 'playwright-core';

import { launchChromium, skipWithoutChromium } from './chromium.js';
import { GROUP, GROUP_VERSION, startServer, type TestServer } from './harness.js';
import { expectOpenWatches } from './open-watches.js';
import { startTcpProxy, type TcpProxy } from './tcp-proxy.js';

const V1 = `/apis/${GROUP}/v1`;
/** Generous: the machine is shared; these bound waits for the page, they time nothing. */
const WAIT_MS = 30_000;
const ARTIFACTS = join('test-artifacts', 'console-watch-cut');

const skip = skipWithoutChromium;

describe('console in chromium: a watch cut mid-stream', { skip }, () => {
  let server: TestServer;
  let proxy: TcpProxy;
  let browser: Browser;
  let page: Page;
  let passed = false;
  /** Uncaught script errors in the page: none expected. */
  const pageErrors: string[] = [];

  /** Changes the team through the API as the admin (not through the proxy); returns its resourceVersion. */
  async function changeTeam(description: string): Promise<string> {
    const res = await server.api(
      'PATCH',
      `${V1}/teams/cut-team`,
      { spec: { description } },
      {
        'Content-Type': 'application/merge-patch+json',
      },
    );
    assert.equal(res.status, 200, res.text);
    return res.json<{ metadata: { resourceVersion: string } }>().metadata.resourceVersion;
  }

  before(async () => {
    server = await startServer({ backend: 'sqlite' });
    const target = new URL(server.url);
    proxy = await startTcpProxy({ host: target.hostname, port: Number(target.port) });
    browser = await launchChromium();
    // The server's certificate is from the test's own CA, which chromium does not know.
    const context = await browser.newContext({ ignoreHTTPSErrors: true });
    page = await context.newPage();
    page.on('pageerror', (err) => pageErrors.push(err.message));
  });

  after(async () => {
    if (!passed && page) {
      mkdirSync(ARTIFACTS, { recursive: true });
      try {
        writeFileSync(join(ARTIFACTS, 'at-failure.png'), await page.screenshot({ fullPage: true }));
      } catch {
        // the page may be gone
      }
      console.error(`console watch-cut e2e failed: screenshot in ${ARTIFACTS}\n${server?.logTail() ?? ''}`);
    }
    await browser?.close();
    await proxy?.close();
    await server?.stop();
  });

  it(
    'reconnects, resumes from the last resourceVersion, shows the change, and leaves one watch',
    {
      timeout: 240_000,
    },
    async () => {
      const created = await server.api('POST', `${V1}/teams`, {
        apiVersion: GROUP_VERSION,
        kind: 'Team',
        metadata: { name: 'cut-team' },
        spec: { displayName: 'Cut team' },
      });
      assert.equal(created.status, 201, created.text);

      // What the page asks of the server: its watches (with their resourceVersion) and reads of the team.
      const watches: string[] = [];
      let reads = 0;
      page.on('request', (r) => {
        const url = new URL(r.url());
        if (!url.pathname.endsWith('/teams') && !url.pathname.endsWith('/teams/cut-team')) return;
        if (url.searchParams.get('watch') === '1')
          watches.push(url.searchParams.get('resourceVersion') ?? '');
        else if (r.method() === 'GET' && url.pathname.endsWith('/teams/cut-team')) reads++;
      });

      const origin = `https://127.0.0.1:${proxy.port}`;
      await page.goto(`${origin}/console/`);
      await page.getByLabel('Access key').fill(server.token);
      await page.getByLabel('Access key').press('Enter');
      await page.getByRole('navigation', { name: 'Main' }).waitFor({ timeout: WAIT_MS });
      await page.goto(`${origin}/console/#/teams/cut-team`);
      const main = page.getByRole('main');
      const fact = (text: string) => main.getByRole('definition').filter({ hasText: text }).first();
      await fact('Cut team').waitFor({ timeout: WAIT_MS });
      await main.getByText('Live', { exact: true }).waitFor({ timeout: WAIT_MS });
      await expectOpenWatches(server, 'teams', 1, WAIT_MS);

      // The watch is mid-stream: it has delivered a change.
      const lastSeen = await changeTeam('Delivered before the cut');
      await fact('Delivered before the cut').waitFor({ timeout: WAIT_MS });
      // Marks that survive only if the page is never reloaded, and what its live indicator says from now on.
      await page.evaluate(`(() => {
      window.stillTheSamePage = true;
      window.liveStates = [];
      const live = document.querySelector('.live');
      new MutationObserver(() => window.liveStates.push(live.textContent)).observe(live, {
        childList: true,
        characterData: true,
        subtree: true,
      });
    })()`);
      const watchesBefore = watches.length;
      const readsBefore = reads;
      assert.equal(watchesBefore, 1, `watches before the cut: ${JSON.stringify(watches)}`);

      // The server side resets the connections, then the team changes while the page is cut off.
      assert.ok(proxy.cutAll() >= 1, 'no connection to cut');
      const changed = await changeTeam('Made after the cut');
      await fact('Made after the cut').waitFor({ timeout: WAIT_MS });
      await main.getByText('Live', { exact: true }).waitFor({ timeout: WAIT_MS });

      const states = await page.evaluate<string[]>('window.liveStates');
      assert.ok(
        states.includes('Reconnecting…'),
        `the page never said it was reconnecting: ${JSON.stringify(states)}`,
      );
      assert.equal(states.at(-1), 'Live');
      assert.equal(
        await page.evaluate<boolean>('window.stillTheSamePage === true'),
        true,
        'the page was reloaded',
      );
      // Resumed, not read again: the new watch starts from the last resourceVersion seen (or a later
      // bookmark's), before the change it then delivered.
      assert.equal(reads, readsBefore, 'the page read the team again instead of resuming its watch');
      const resumedFrom = watches[watchesBefore];
      assert.ok(resumedFrom, `no watch after the cut: ${JSON.stringify(watches)}`);
      assert.ok(
        BigInt(resumedFrom) >= BigInt(lastSeen) && BigInt(resumedFrom) < BigInt(changed),
        `resumed from ${resumedFrom}, last seen ${lastSeen}, change at ${changed}`,
      );
      assert.ok(proxy.accepted() > 1, 'the browser never connected again');
      // The cut watch is gone on the server too: one watch open, the new one.
      await expectOpenWatches(server, 'teams', 1, WAIT_MS);

      // Leaving the page ends that watch.
      await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Users' }).click();
      await page.getByRole('heading', { name: 'Users' }).waitFor({ timeout: WAIT_MS });
      await expectOpenWatches(server, 'teams', 0, WAIT_MS);
      assert.deepEqual(pageErrors, []);
      passed = true;
    },
  );
});
