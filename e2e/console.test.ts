// The console in a real browser (issue 18): Debian's chromium, driven by
// playwright-core, against a started server. What is checked is what a user sees:
// the login form and its messages, the new key shown once, values escaped as text
// (no dialog ever fires), a secret's value revealed on demand, a team edited, and
// logging out; detail pages that follow their object live (a change shown without a
// reload, reconnection after a refused watch, an edit kept against a concurrent change
// of the same field and refused (which field, and its value now), a save that goes
// through a change of other fields and a key's status.lastActivity write, a deletion,
// and the watch closed on the server when the page is left); an object held by a
// finalizer shown as being deleted (its page read-only, a mark in the list) until the
// page removes the finalizer. A screenshot of each
// page is written to test-artifacts/console/ when the test fails. CONSOLE_SCREENSHOT=<path> also saves the Global Secrets page there
// (the README's picture, docs/console.png).
//
// Skipped only when /usr/bin/chromium is absent (hack/ensure-test-deps.sh installs it).

import assert from 'node:assert/strict';
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { Browser, BrowserContext, Page } from 'playwright-core';

import { createAccessKey } from './access-keys.js';
import { launchChromium, skipWithoutChromium } from './chromium.js';
import { eventually } from './eventually.js';
import { apiRequest } from './https-client.js';
import { GROUP, GROUP_VERSION, startServer, type TestServer } from './harness.js';
import { expectOpenWatches as expectOpenWatchesOn } from './open-watches.js';

const TEST = { timeout: 240_000 };
const V1 = `/apis/${GROUP}/v1`;
/** Generous: the machine is shared; these bound waits for the page, they time nothing. */
const WAIT_MS = 30_000;
/** How long a revocation may take to reach the authenticator (through its watches). */
const PROPAGATION_MS = 20_000;
const ARTIFACTS = join('test-artifacts', 'console');

const SCRIPT = '<script>alert(1)</script>';
const IMG = '"><img src=x onerror=alert(1)>';
const HOSTILE = `${SCRIPT} ${IMG}`;

const skip = skipWithoutChromium;

describe('console in chromium', { skip }, () => {
  let server: TestServer;
  let browser: Browser;
  let context: BrowserContext;
  let page: Page;
  /** Every JavaScript dialog the page opened: an escaped page opens none. */
  const dialogs: string[] = [];
  /** Requests to anywhere but the server. */
  const foreign: string[] = [];
  /** Uncaught script errors and CSP violations in the page. */
  const pageErrors: string[] = [];
  /** Screenshots by step, written out only when the test fails. */
  const shots = new Map<string, Buffer>();
  /** Browser tests that ran to their end; fewer than BROWSER_TESTS means one failed. */
  let passed = 0;
  const BROWSER_TESTS = 4;

  async function shot(step: string): Promise<void> {
    shots.set(step, await page.screenshot({ fullPage: true }));
  }

  async function alertText(text: string | RegExp): Promise<void> {
    await page.getByRole('alert').filter({ hasText: text }).first().waitFor({ timeout: WAIT_MS });
  }

  async function expectOpenWatches(resource: string, count: number): Promise<void> {
    await expectOpenWatchesOn(server, resource, count, WAIT_MS);
  }

  /** Creates an object through the API as the admin; it must be created. */
  async function create(
    collection: string,
    kind: string,
    name: string,
    spec: Record<string, unknown>,
  ): Promise<void> {
    const res = await server.api('POST', `${V1}/${collection}`, {
      apiVersion: GROUP_VERSION,
      kind,
      metadata: { name },
      spec,
    });
    assert.equal(res.status, 201, res.text);
  }

  /** Changes an object through the API as the admin, as `kubectl patch --type merge` does. */
  async function mergePatch(path: string, body: Record<string, unknown>): Promise<void> {
    const res = await server.api('PATCH', `${V1}/${path}`, body, {
      'Content-Type': 'application/merge-patch+json',
    });
    assert.equal(res.status, 200, res.text);
  }

  async function logInAsAdmin(): Promise<void> {
    await page.goto(`${server.url}/console/`);
    await page.getByLabel('Access key').fill(server.token);
    await page.getByLabel('Access key').press('Enter');
    await page.getByRole('navigation', { name: 'Main' }).waitFor({ timeout: WAIT_MS });
  }

  before(async () => {
    server = await startServer({ backend: 'sqlite' });
    browser = await launchChromium();
    // The server's certificate is from the test's own CA, which chromium does not know.
    context = await browser.newContext({ ignoreHTTPSErrors: true, viewport: { width: 1100, height: 720 } });
    page = await context.newPage();
    // Script errors and Content-Security-Policy violations the page reports: none expected.
    page.on('pageerror', (err) => pageErrors.push(err.message));
    page.on('console', (msg) => {
      if (msg.type() === 'error' && /Content.Security.Policy/i.test(msg.text())) pageErrors.push(msg.text());
    });
    // Every request the page makes goes to the server itself: no third party.
    page.on('request', (r) => {
      if (!r.url().startsWith(server.url) && !r.url().startsWith('data:')) foreign.push(r.url());
    });
    page.on('dialog', (d) => {
      dialogs.push(d.message());
      void d.dismiss();
    });
  });

  after(async () => {
    if (passed < BROWSER_TESTS && page) {
      mkdirSync(ARTIFACTS, { recursive: true });
      try {
        await shot('at-failure');
      } catch {
        // the page may be gone
      }
      for (const [step, png] of shots) writeFileSync(join(ARTIFACTS, `${step}.png`), png);
      console.error(`console e2e failed: screenshots in ${ARTIFACTS}\n${server?.logTail() ?? ''}`);
    }
    await browser?.close();
    await server?.stop();
  });

  it('is served without credentials with its security headers', TEST, async () => {
    const res = await apiRequest({ baseUrl: server.apiBase, ca: server.ca, token: '' }, 'GET', '/console/');
    assert.equal(res.status, 200, res.text);
    assert.match(String(res.headers['content-security-policy']), /script-src 'self'/);
    assert.equal(res.headers['x-frame-options'], 'DENY');
  });

  it(
    'logs in, shows escaped values, creates a key once, reveals a secret, edits a team, logs out',
    TEST,
    async () => {
      // What the browser will show, made through the API as the admin.
      const secret = await server.api('POST', `${V1}/namespaces/console-e2e/sharedsecrets`, {
        apiVersion: GROUP_VERSION,
        kind: 'SharedSecret',
        metadata: { name: 'registry' },
        spec: {
          displayName: HOSTILE,
          data: {
            password: Buffer.from('s3cr3t-registry-password').toString('base64'),
            hostile: Buffer.from(HOSTILE).toString('base64'),
          },
        },
      });
      assert.equal(secret.status, 201, secret.text);
      const team = await server.api('POST', `${V1}/teams`, {
        apiVersion: GROUP_VERSION,
        kind: 'Team',
        metadata: { name: 'platform' },
        // A display name the form shows trimmed: a save of other fields leaves it as stored.
        spec: { displayName: ' Platform team ' },
      });
      assert.equal(team.status, 201, team.text);

      const consoleUrl = `${server.url}/kubernetes/management/console/`;
      await page.goto(consoleUrl);
      await page.getByLabel('Access key').waitFor({ timeout: WAIT_MS });
      await shot('login');

      // A key the server does not know: a bare 401, shown as "Invalid access key".
      await page.getByLabel('Access key').fill('z'.repeat(64));
      await page.getByRole('button', { name: 'Log in' }).click();
      await alertText('Invalid access key');
      await shot('login-invalid');
      assert.equal(await page.getByRole('navigation').count(), 0, 'a wrong key must not log in');

      // A disabled key: the server's own message, not "Invalid access key".
      const disabledKey = await createAccessKey(server, 'console-disabled', {
        user: 'admin',
        disabled: true,
      });
      const asDisabled = { baseUrl: server.apiBase, ca: server.ca, token: disabledKey };
      const selfBody = { apiVersion: GROUP_VERSION, kind: 'Self', spec: {} };
      const refused = await apiRequest(asDisabled, 'POST', `${V1}/selves`, selfBody);
      assert.equal(refused.status, 401, refused.text);
      const reason = refused.json<{ message: string }>().message;
      assert.notEqual(reason, 'Unauthorized');
      await page.getByLabel('Access key').fill(disabledKey);
      await page.getByRole('button', { name: 'Log in' }).click();
      await alertText(reason);
      assert.equal(await page.getByRole('navigation').count(), 0, 'a disabled key must not log in');

      await page.getByLabel('Access key').fill(server.token);
      await page.getByRole('button', { name: 'Log in' }).click();
      const nav = page.getByRole('navigation', { name: 'Main' });
      await nav.waitFor({ timeout: WAIT_MS });
      for (const name of ['Global Secrets', 'Teams', 'Users', 'Access Keys']) {
        assert.equal(await nav.getByRole('link', { name }).count(), 1, name);
      }
      // The key stays in this tab's sessionStorage only.
      assert.equal(await page.evaluate<number>('localStorage.length'), 0);
      assert.equal(await page.evaluate<string>('document.cookie'), '');

      // Global Secrets: the hostile display name is text, and nothing ran.
      await nav.getByRole('link', { name: 'Global Secrets' }).click();
      const row = page.getByRole('row').filter({ hasText: 'registry' });
      await row.waitFor({ timeout: WAIT_MS });
      assert.equal(await row.getByRole('cell', { name: HOSTILE, exact: true }).count(), 1);
      assert.equal(await row.getByRole('cell', { name: 'console-e2e', exact: true }).count(), 1);
      assert.equal(await page.locator('main img, main script').count(), 0);
      await shot('secrets');
      if (process.env['CONSOLE_SCREENSHOT']) {
        mkdirSync(dirname(process.env['CONSOLE_SCREENSHOT']), { recursive: true });
        await page.screenshot({ path: process.env['CONSOLE_SCREENSHOT'] });
      }

      // Live: a secret created elsewhere appears without a reload (the page watches).
      const other = await server.api('POST', `${V1}/namespaces/console-e2e/sharedsecrets`, {
        apiVersion: GROUP_VERSION,
        kind: 'SharedSecret',
        metadata: { name: 'arrived-live' },
        spec: { displayName: 'Arrived live' },
      });
      assert.equal(other.status, 201, other.text);
      await page.getByRole('cell', { name: 'Arrived live', exact: true }).waitFor({ timeout: WAIT_MS });

      // A secret's page: values hidden until "Reveal".
      await row.getByRole('link', { name: 'registry' }).click();
      const passwordRow = page.getByRole('row').filter({ hasText: 'password' });
      await passwordRow.waitFor({ timeout: WAIT_MS });
      assert.equal(
        await page.getByText('s3cr3t-registry-password').count(),
        0,
        'a value shows before Reveal',
      );
      await page.getByRole('button', { name: 'Reveal password' }).click();
      await page.getByText('s3cr3t-registry-password', { exact: true }).waitFor({ timeout: WAIT_MS });
      await page.getByRole('button', { name: 'Reveal hostile' }).click();
      await page.getByText(HOSTILE, { exact: true }).first().waitFor({ timeout: WAIT_MS });
      assert.equal(await page.locator('main img, main script').count(), 0);
      await shot('secret');

      // Add a key through the form; a key the server refuses shows its field error beside the form.
      await page.getByLabel('Key', { exact: true }).fill('bad key!');
      await page.getByLabel('Value').fill('x');
      await page.getByRole('button', { name: 'Save' }).click();
      await alertText(/spec\.data/);
      await page.getByLabel('Key', { exact: true }).fill('token');
      await page.getByLabel('Value').fill('added-from-the-console');
      await page.getByRole('button', { name: 'Save' }).click();
      await page.getByRole('button', { name: 'Reveal token' }).waitFor({ timeout: WAIT_MS });
      const stored = await server.api('GET', `${V1}/namespaces/console-e2e/sharedsecrets/registry`);
      const data = stored.json<{ spec: { data: Record<string, string> } }>().spec.data;
      assert.equal(Buffer.from(data['token'] ?? '', 'base64').toString(), 'added-from-the-console');

      // An access rule added through the form lands in spec.access.
      await page.getByLabel('Users (comma separated, * for everyone)').fill('bob');
      await page.getByLabel('Verbs (comma separated: get, update, *)').fill('get');
      await page.getByRole('button', { name: 'Add rule' }).click();
      await page.getByRole('cell', { name: 'bob', exact: true }).waitFor({ timeout: WAIT_MS });
      const withRule = await server.api('GET', `${V1}/namespaces/console-e2e/sharedsecrets/registry`);
      assert.deepEqual(withRule.json<{ spec: { access?: unknown[] } }>().spec.access, [
        { users: ['bob'], verbs: ['get'] },
      ]);

      // A Global Secret created through the form opens its page.
      await nav.getByRole('link', { name: 'Global Secrets' }).click();
      await page.getByLabel('Namespace').fill('console-e2e');
      await page.getByLabel('Name', { exact: true }).fill('from-form');
      await page.getByLabel('Display name').fill('Made in the console');
      await page.getByRole('button', { name: 'Create' }).click();
      await page.getByRole('heading', { name: 'Global Secret from-form' }).waitFor({ timeout: WAIT_MS });
      const made = await server.api('GET', `${V1}/namespaces/console-e2e/sharedsecrets/from-form`);
      assert.equal(made.status, 200, made.text);

      // Access Keys: a new key shown once, in an element with role "status".
      await nav.getByRole('link', { name: 'Access Keys' }).click();
      await page.getByLabel('Display name').fill(`CI key ${SCRIPT}`);
      await page.getByLabel('TTL in seconds (optional)').fill('3600');
      await page.getByRole('button', { name: 'Create' }).click();
      const status = page.getByRole('status');
      await status.waitFor({ timeout: WAIT_MS });
      const newKey = (await status.getByLabel('New access key').textContent()) ?? '';
      assert.match(newKey, /^[a-z]{64}$/);
      assert.equal(await status.getByRole('button', { name: 'Copy' }).count(), 1);
      await page.getByRole('cell', { name: `CI key ${SCRIPT}`, exact: true }).waitFor({ timeout: WAIT_MS });
      await shot('access-keys');
      // The key works, as its owner.
      const asNewKey = { baseUrl: server.apiBase, ca: server.ca, token: newKey };
      const self = await apiRequest(asNewKey, 'POST', `${V1}/selves`, selfBody);
      assert.equal(self.status, 201, self.text);
      // ... and is never shown again: after a reload the page holds no trace of it.
      await page.reload();
      await page.getByRole('cell', { name: `CI key ${SCRIPT}`, exact: true }).waitFor({ timeout: WAIT_MS });
      assert.equal(await page.getByRole('status').count(), 0);
      assert.ok(!(await page.content()).includes(newKey), 'the key is shown again after a reload');

      // Disable, then delete, each after a confirmation in the page.
      const keyRow = page.getByRole('row').filter({ hasText: `CI key ${SCRIPT}` });
      await keyRow.getByRole('button', { name: 'Disable', exact: true }).click();
      await keyRow.getByRole('button', { name: 'Confirm disable' }).click();
      await keyRow.getByRole('cell', { name: 'disabled', exact: true }).waitFor({ timeout: WAIT_MS });
      await keyRow.getByRole('button', { name: 'Delete', exact: true }).click();
      await keyRow.getByRole('button', { name: 'Confirm delete' }).click();
      await keyRow.waitFor({ state: 'detached', timeout: WAIT_MS });
      await eventually(async () => {
        const r = await apiRequest(asNewKey, 'POST', `${V1}/selves`, selfBody);
        assert.equal(r.status, 401, r.text);
      }, PROPAGATION_MS);

      // Teams: edit a team's description and groups.
      await nav.getByRole('link', { name: 'Teams' }).click();
      await page.getByRole('link', { name: 'platform', exact: true }).click();
      await page.getByLabel('Description').waitFor({ timeout: WAIT_MS });
      await page.getByLabel('Description').fill('Runs the platform');
      await page.getByLabel('Groups (comma separated)').fill('oncall, release');
      await page.getByRole('button', { name: 'Save' }).click();
      await page
        .getByRole('definition')
        .filter({ hasText: 'Runs the platform' })
        .first()
        .waitFor({ timeout: WAIT_MS });
      const edited = await server.api('GET', `${V1}/teams/platform`);
      assert.equal(edited.json<{ spec: { description?: string } }>().spec.description, 'Runs the platform');
      assert.deepEqual(edited.json<{ spec: { groups?: string[] } }>().spec.groups, ['oncall', 'release']);
      // Only the edited fields were saved: the display name is as stored, not trimmed.
      assert.equal(edited.json<{ spec: { displayName?: string } }>().spec.displayName, ' Platform team ');
      await shot('team');

      await nav.getByRole('link', { name: 'Users' }).click();
      await page.getByRole('heading', { name: 'Users' }).waitFor({ timeout: WAIT_MS });
      await shot('users');

      // Log out: back to the form, the key forgotten.
      await page.getByRole('button', { name: 'Log out' }).click();
      await page.getByLabel('Access key').waitFor({ timeout: WAIT_MS });
      assert.equal(await page.evaluate<number>('sessionStorage.length'), 0);
      await page.reload();
      await page.getByLabel('Access key').waitFor({ timeout: WAIT_MS });
      assert.equal(await page.getByRole('navigation').count(), 0);

      assert.deepEqual(dialogs, [], 'a value ran as script');
      assert.deepEqual(pageErrors, []);
      passed++;
    },
  );

  it(
    'keeps detail pages live: changes, an edit kept against a change, deletion, and leaving; edits details',
    TEST,
    async () => {
      await create('teams', 'Team', 'live-team', { displayName: 'Live team', description: 'As created' });
      await create('namespaces/console-e2e/sharedsecrets', 'SharedSecret', 'live-secret', {
        data: { first: Buffer.from('first-value').toString('base64') },
      });

      await page.setViewportSize({ width: 1100, height: 720 });
      await logInAsAdmin();
      await expectOpenWatches('teams', 0);
      const TEAM_WATCH = /\/teams\?.*watch=1/;
      let connected = false;
      let refused = 0;
      await page.route(TEAM_WATCH, async (route) => {
        if (connected) return route.continue();
        refused++;
        return route.abort('connectionreset');
      });
      await page.goto(`${server.url}/console/#/teams/live-team`);
      const main = page.getByRole('main');
      const fact = (text: string) => main.getByRole('definition').filter({ hasText: text }).first();
      await fact('Live team').waitFor({ timeout: WAIT_MS });
      // Its watch cannot connect (refused by the browser, as a dropped connection is): the
      // page says it is reconnecting and retries with backoff; once the watch connects, a
      // change made while it was down arrives (it resumes from the get's resourceVersion).
      await main.getByText('Reconnecting…', { exact: true }).waitFor({ timeout: WAIT_MS });
      await mergePatch('teams/live-team', { spec: { description: 'Changed while disconnected' } });
      connected = true;
      await fact('Changed while disconnected').waitFor({ timeout: WAIT_MS });
      await main.getByText('Live', { exact: true }).waitFor({ timeout: WAIT_MS });
      await page.unroute(TEAM_WATCH);
      assert.ok(refused > 0);
      // The page watches its one team (fieldSelector=metadata.name=live-team).
      await expectOpenWatches('teams', 1);
      // A mark in the document: it survives only if the page is never reloaded.
      await page.evaluate('window.stillTheSamePage = true');

      // Changed elsewhere: the page shows it without a reload.
      await mergePatch('teams/live-team', { spec: { displayName: 'Renamed elsewhere' } });
      await fact('Renamed elsewhere').waitFor({ timeout: WAIT_MS });
      assert.equal(await page.getByLabel('Display name').inputValue(), 'Renamed elsewhere');
      assert.equal(
        await page.evaluate<boolean>('window.stillTheSamePage === true'),
        true,
        'the page was reloaded',
      );
      await shot('team-live');

      // An edit in progress is kept when the team changes meanwhile: the page says so instead.
      await page.getByLabel('Description').fill('My edit');
      await mergePatch('teams/live-team', { spec: { description: 'Changed meanwhile' } });
      const changed = page.getByRole('status').filter({ hasText: 'was changed since this page showed it' });
      await changed.waitFor({ timeout: WAIT_MS });
      assert.equal(await page.getByLabel('Description').inputValue(), 'My edit', 'the edit was overwritten');
      assert.equal(await fact('Changed meanwhile').count(), 0);
      await shot('team-changed-while-editing');
      // Saving the edit of a field changed meanwhile: refused (its JSON Patch test fails), and the
      // page says which field and what it holds now; the edit stays in the form.
      await page.getByRole('button', { name: 'Save' }).click();
      await alertText('Description is now "Changed meanwhile"');
      assert.equal(await page.getByLabel('Description').inputValue(), 'My edit', 'the edit was lost');
      const kept = await server.api('GET', `${V1}/teams/live-team`);
      assert.equal(kept.json<{ spec: { description?: string } }>().spec.description, 'Changed meanwhile');
      // "Reload" shows the team as it is now; an edit of that version saves.
      await changed.getByRole('button', { name: 'Reload' }).click();
      await fact('Changed meanwhile').waitFor({ timeout: WAIT_MS });
      assert.equal(await page.getByLabel('Description').inputValue(), 'Changed meanwhile');
      await page.getByLabel('Description').fill('Saved after reload');
      await page.getByLabel('Cluster roles (comma separated)').fill('view, edit');
      // A change elsewhere to a field this edit leaves alone: no conflict, and not undone by the save.
      await mergePatch('teams/live-team', { spec: { groups: ['changed-elsewhere'] } });
      await changed.waitFor({ timeout: WAIT_MS });
      await page.getByRole('button', { name: 'Save' }).click();
      await fact('Saved after reload').waitFor({ timeout: WAIT_MS });
      const saved = await server.api('GET', `${V1}/teams/live-team`);
      const savedSpec = saved.json<{
        spec: { description?: string; clusterRoles?: unknown[]; groups?: string[] };
      }>().spec;
      assert.equal(savedSpec.description, 'Saved after reload');
      assert.deepEqual(savedSpec.clusterRoles, [{ name: 'view' }, { name: 'edit' }]);
      assert.deepEqual(savedSpec.groups, ['changed-elsewhere'], 'the save undid a change it did not make');

      // Deleted elsewhere: the page says so, shows nothing of it any more, and stops watching.
      const gone = await server.api('DELETE', `${V1}/teams/live-team`);
      assert.ok(gone.status === 200 || gone.status === 202, gone.text);
      await alertText('Team live-team was deleted.');
      assert.equal(await main.getByRole('definition').count(), 0, 'the deleted team is still shown');
      assert.equal(await page.getByLabel('Description').count(), 0, 'the deleted team can still be edited');
      await shot('team-deleted');
      await expectOpenWatches('teams', 0);

      // A Global Secret's page follows it too, and a revealed value stays revealed across a change.
      await page.goto(`${server.url}/console/#/secrets/console-e2e/live-secret`);
      await page.getByRole('button', { name: 'Reveal first' }).click();
      await page.getByText('first-value', { exact: true }).waitFor({ timeout: WAIT_MS });
      await expectOpenWatches('sharedsecrets', 1);
      await mergePatch('namespaces/console-e2e/sharedsecrets/live-secret', {
        spec: { data: { second: Buffer.from('second-value').toString('base64') } },
      });
      await page.getByRole('button', { name: 'Reveal second' }).waitFor({ timeout: WAIT_MS });
      assert.equal(await page.getByText('first-value', { exact: true }).count(), 1);
      assert.equal(
        await page.getByText('second-value', { exact: true }).count(),
        0,
        'a value shows before Reveal',
      );
      // Its description and owner are edited on the page; a key added elsewhere meanwhile neither
      // refuses the save nor is undone by it (only the changed fields are saved, each tested).
      await page.getByLabel('Description').fill('Holds the registry login');
      await page.getByLabel('Owner: user').fill('admin');
      await mergePatch('namespaces/console-e2e/sharedsecrets/live-secret', {
        spec: { data: { third: Buffer.from('third-value').toString('base64') } },
      });
      await page
        .getByRole('status')
        .filter({ hasText: 'was changed since this page showed it' })
        .waitFor({ timeout: WAIT_MS });
      await page.getByRole('button', { name: 'Update details' }).click();
      await fact('Holds the registry login').waitFor({ timeout: WAIT_MS });
      await fact('user admin').waitFor({ timeout: WAIT_MS });
      const detailed = await server.api('GET', `${V1}/namespaces/console-e2e/sharedsecrets/live-secret`);
      const detailedSpec = detailed.json<{ spec: { description?: string; owner?: unknown; data?: object } }>()
        .spec;
      assert.equal(detailedSpec.description, 'Holds the registry login');
      assert.deepEqual(detailedSpec.owner, { user: 'admin' });
      assert.deepEqual(Object.keys(detailedSpec.data ?? {}).sort(), ['first', 'second', 'third']);
      assert.equal(
        await page.evaluate<boolean>('window.stillTheSamePage === true'),
        true,
        'the page was reloaded',
      );

      // Leaving the page ends its watch on the server.
      await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Access Keys' }).click();
      await page.getByRole('heading', { name: 'Access Keys' }).waitFor({ timeout: WAIT_MS });
      await expectOpenWatches('sharedsecrets', 0);

      // An access key's page (from the list) follows the key too, and never shows the key itself.
      const liveKey = await createAccessKey(server, 'live-key', { user: 'admin', displayName: 'Live key' });
      await page.getByRole('link', { name: 'live-key', exact: true }).click();
      await page.getByRole('heading', { name: 'Access key live-key' }).waitFor({ timeout: WAIT_MS });
      await fact('Live key').waitFor({ timeout: WAIT_MS });
      await fact('active').waitFor({ timeout: WAIT_MS });
      // The key in use while its page is being edited: the server writes its status.lastActivity
      // (a new resourceVersion), and the save still goes through: nobody changed its description.
      await page.getByLabel('Description').fill('Used by the release job');
      const asLiveKey = { baseUrl: server.apiBase, ca: server.ca, token: liveKey };
      const used = await apiRequest(asLiveKey, 'POST', `${V1}/selves`, {
        apiVersion: GROUP_VERSION,
        kind: 'Self',
        spec: {},
      });
      assert.equal(used.status, 201, used.text);
      await page
        .getByRole('status')
        .filter({ hasText: 'was changed since this page showed it' })
        .waitFor({ timeout: WAIT_MS });
      await page.getByRole('button', { name: 'Save' }).click();
      await fact('Used by the release job').waitFor({ timeout: WAIT_MS });
      const inUse = await server.api('GET', `${V1}/ownedaccesskeys/live-key`);
      const inUseKey = inUse.json<{ spec: { description?: string }; status?: { lastActivity?: string } }>();
      assert.equal(inUseKey.spec.description, 'Used by the release job');
      assert.ok(inUseKey.status?.lastActivity, 'the status write was undone');
      assert.equal(await page.getByRole('alert').filter({ hasText: /\S/ }).count(), 0, 'a failure is shown');
      await mergePatch('ownedaccesskeys/live-key', { spec: { disabled: true } });
      await fact('disabled').waitFor({ timeout: WAIT_MS });
      assert.ok(!(await page.content()).includes(liveKey), "the key's page shows the key");
      await shot('access-key');

      await page.getByRole('button', { name: 'Log out' }).click();
      await page.getByLabel('Access key').waitFor({ timeout: WAIT_MS });
      assert.deepEqual(pageErrors, []);
      passed++;
    },
  );

  it('shows a user only what their key may see', TEST, async () => {
    await create('users', 'User', 'alice', { username: 'alice', displayName: 'Alice' });
    await create('namespaces/alice-ns/sharedsecrets', 'SharedSecret', 'alices-secret', {
      displayName: 'Alice owns this',
      owner: { user: 'alice' },
    });
    const aliceKey = await createAccessKey(server, 'alice-console', {
      user: 'alice',
      displayName: 'Alice in the console',
    });

    await page.goto(`${server.url}/console/`);
    // By keyboard, on a phone-sized screen: the key typed, Enter submits.
    await page.setViewportSize({ width: 375, height: 740 });
    await page.getByLabel('Access key').fill(aliceKey);
    await page.getByLabel('Access key').press('Enter');
    const nav = page.getByRole('navigation', { name: 'Main' });
    await nav.waitFor({ timeout: WAIT_MS });
    await page.getByRole('cell', { name: 'Alice owns this', exact: true }).waitFor({ timeout: WAIT_MS });
    assert.equal(await page.getByRole('link', { name: 'registry', exact: true }).count(), 0);
    await shot('secrets-as-alice');
    // Nothing but a table's own scroller is wider than a narrow screen.
    const overflow = await page.evaluate<number>('document.documentElement.scrollWidth - window.innerWidth');
    assert.ok(overflow <= 0, `the page is ${overflow}px wider than the screen`);

    // Her own secret's page follows it live too: she may watch it by its name.
    await page.getByRole('link', { name: 'alices-secret', exact: true }).click();
    await page.getByRole('heading', { name: 'Global Secret alices-secret' }).waitFor({ timeout: WAIT_MS });
    await mergePatch('namespaces/alice-ns/sharedsecrets/alices-secret', {
      spec: { description: 'Seen by Alice live' },
    });
    await page
      .getByRole('definition')
      .filter({ hasText: 'Seen by Alice live' })
      .first()
      .waitFor({ timeout: WAIT_MS });
    assert.equal(await page.getByRole('alert').filter({ hasText: /\S/ }).count(), 0, 'a failure is shown');

    await nav.getByRole('link', { name: 'Access Keys' }).click();
    await page.getByRole('cell', { name: 'Alice in the console', exact: true }).waitFor({ timeout: WAIT_MS });
    assert.equal(await page.getByRole('cell', { name: 'console-disabled', exact: true }).count(), 0);

    // What she may not do is refused by the server, whose message is shown.
    await nav.getByRole('link', { name: 'Teams' }).click();
    await page.getByRole('heading', { name: 'Teams' }).waitFor({ timeout: WAIT_MS });
    assert.equal(await page.getByRole('link', { name: 'platform', exact: true }).count(), 0);
    await page.goto(`${server.url}/console/#/teams/platform`);
    await alertText(/forbidden/);
    await shot('team-forbidden');

    await page.getByRole('button', { name: 'Log out' }).click();
    await page.getByLabel('Access key').waitFor({ timeout: WAIT_MS });

    // The administrator signs her out everywhere (after a confirmation): her key stops working.
    await page.getByLabel('Access key').fill(server.token);
    await page.getByLabel('Access key').press('Enter');
    await nav.waitFor({ timeout: WAIT_MS });
    await page.goto(`${server.url}/console/#/users/alice`);
    await page.getByRole('button', { name: 'Sign out everywhere', exact: true }).click();
    await page.getByRole('button', { name: 'Confirm sign out everywhere' }).click();
    await page
      .getByRole('button', { name: 'Sign out everywhere', exact: true })
      .waitFor({ timeout: WAIT_MS });
    const asAlice = { baseUrl: server.apiBase, ca: server.ca, token: aliceKey };
    const selfBody = { apiVersion: GROUP_VERSION, kind: 'Self', spec: {} };
    await eventually(async () => {
      const r = await apiRequest(asAlice, 'POST', `${V1}/selves`, selfBody);
      assert.equal(r.status, 401, r.text);
    }, PROPAGATION_MS);
    const alice = await server.api('GET', `${V1}/users/alice`);
    assert.equal(alice.json<{ spec: { tokenGeneration?: number } }>().spec.tokenGeneration, 1);

    // Edit her display name and email.
    await page.getByLabel('Email').fill('alice@example.com');
    await page.getByRole('button', { name: 'Save' }).click();
    await page
      .getByRole('definition')
      .filter({ hasText: 'alice@example.com' })
      .first()
      .waitFor({ timeout: WAIT_MS });
    const edited = await server.api('GET', `${V1}/users/alice`);
    assert.equal(edited.json<{ spec: { email?: string } }>().spec.email, 'alice@example.com');
    await page.getByRole('button', { name: 'Log out' }).click();
    await page.getByLabel('Access key').waitFor({ timeout: WAIT_MS });
    assert.deepEqual(dialogs, []);
    assert.deepEqual(pageErrors, []);
    assert.deepEqual(foreign, [], 'the console made a third-party request');
    passed++;
  });
  it('shows an object being deleted as such until its finalizers are gone', TEST, async () => {
    const FINALIZER = 'example.com/hold';
    const res = await server.api('POST', `${V1}/teams`, {
      apiVersion: GROUP_VERSION,
      kind: 'Team',
      metadata: { name: 'held-team', finalizers: [FINALIZER] },
      spec: { displayName: 'Held team' },
    });
    assert.equal(res.status, 201, res.text);
    await page.setViewportSize({ width: 1100, height: 720 });
    await logInAsAdmin();
    await page.goto(`${server.url}/console/#/teams/held-team`);
    const main = page.getByRole('main');
    await main.getByRole('definition').filter({ hasText: 'Held team' }).first().waitFor({ timeout: WAIT_MS });
    await main.getByText('Live', { exact: true }).waitFor({ timeout: WAIT_MS });

    // Deleted elsewhere: the finalizer holds it (kubectl still lists it), and the page says so live.
    const asked = await server.api('DELETE', `${V1}/teams/held-team`);
    assert.ok(asked.status === 200 || asked.status === 202, asked.text);
    const held = await server.api('GET', `${V1}/teams/held-team`);
    assert.ok(held.json<{ metadata: { deletionTimestamp?: string } }>().metadata.deletionTimestamp);
    const notice = page.getByRole('status').filter({ hasText: 'Team held-team is being deleted' });
    await notice.waitFor({ timeout: WAIT_MS });
    await notice.getByText(FINALIZER, { exact: true }).waitFor({ timeout: WAIT_MS });
    // Still shown, but no longer editable.
    assert.equal(await main.getByRole('definition').filter({ hasText: 'Held team' }).count(), 1);
    assert.equal(await page.getByRole('button', { name: 'Save' }).isDisabled(), true, 'Save is still on');
    assert.equal(await page.getByLabel('Description').isDisabled(), true, 'the form is still on');
    await shot('team-being-deleted');

    // The list marks it beside its name.
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Teams' }).click();
    const row = page
      .getByRole('row')
      .filter({ has: page.getByRole('link', { name: 'held-team', exact: true }) });
    await row.getByText('Deleting', { exact: true }).waitFor({ timeout: WAIT_MS });
    assert.equal(
      await page.getByRole('row').filter({ hasText: 'platform' }).getByText('Deleting').count(),
      0,
      'a team not being deleted is marked',
    );

    // Its page removes the finalizer (a JSON Patch that tests it first): the server then deletes the
    // team, and the DELETED event turns the page into "deleted".
    await row.getByRole('link', { name: 'held-team', exact: true }).click();
    await notice.waitFor({ timeout: WAIT_MS });
    await notice.getByRole('button', { name: `Remove finalizer ${FINALIZER}` }).click();
    await notice.getByRole('button', { name: 'Confirm remove finalizer' }).click();
    await alertText('Team held-team was deleted.');
    assert.equal(await main.getByRole('definition').count(), 0, 'the deleted team is still shown');
    const gone = await server.api('GET', `${V1}/teams/held-team`);
    assert.equal(gone.status, 404, gone.text);
    await expectOpenWatches('teams', 0);

    await page.getByRole('button', { name: 'Log out' }).click();
    await page.getByLabel('Access key').waitFor({ timeout: WAIT_MS });
    assert.deepEqual(pageErrors, []);
    passed++;
  });
});
