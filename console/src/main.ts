// The console's entry: the login form until a key is checked, then the navigation
// and one view per route. The key stays in this tab (session.ts); "Log out" forgets it.

import './style.css';

import { ApiClient, apiPrefix, loadConfig, messageOf, type ConsoleConfig } from './api.js';
import type { Context, SelfStatus, View } from './context.js';
import { button, h, replace } from './dom.js';
import { currentSegments, link, match, type Route } from './router.js';
import { forgetKey, saveKey, savedKey } from './session.js';
import { accessKeyView, accessKeysView } from './views/access-keys.js';
import { checkKey, loginView } from './views/login.js';
import { secretView, secretsView } from './views/secrets.js';
import { teamView, teamsView, userView, usersView } from './views/teams-users.js';

const NAV: { label: string; segment: string }[] = [
  { label: 'Global Secrets', segment: 'secrets' },
  { label: 'Teams', segment: 'teams' },
  { label: 'Users', segment: 'users' },
  { label: 'Access Keys', segment: 'keys' },
];

const ROUTES: (Route & { view: View })[] = [
  { name: 'secrets', pattern: ['secrets'], view: secretsView },
  { name: 'secret', pattern: ['secrets', ':ns', ':name'], view: secretView },
  { name: 'teams', pattern: ['teams'], view: teamsView },
  { name: 'team', pattern: ['teams', ':name'], view: teamView },
  { name: 'users', pattern: ['users'], view: usersView },
  { name: 'user', pattern: ['users', ':name'], view: userView },
  { name: 'keys', pattern: ['keys'], view: accessKeysView },
  { name: 'key', pattern: ['keys', ':name'], view: accessKeyView },
];

const app = document.getElementById('app') as HTMLElement;
const prefix = apiPrefix(location.pathname);

function whoami(self: SelfStatus): string {
  if (self.user) return self.user.displayName || self.user.name;
  if (self.team) return `team ${self.team.displayName || self.team.name}`;
  return self.subject ?? '';
}

function showLogin(config: ConsoleConfig): void {
  window.onhashchange = null;
  replace(
    app,
    loginView(prefix, config, (key, self) => {
      saveKey(key);
      showConsole(config, key, self);
    }),
  );
  document.getElementById('access-key')?.focus();
}

function showConsole(config: ConsoleConfig, key: string, self: SelfStatus): void {
  const main = h('main', { id: 'main', tabindex: -1 });
  const navLinks = NAV.map((n) => h('a', { href: link(n.segment) }, n.label));
  const logout = button('Log out', () => {
    leaving.abort();
    forgetKey();
    history.replaceState(null, '', location.pathname);
    showLogin(config);
  });
  replace(
    app,
    h('a', { href: '#main', class: 'skip' }, 'Skip to content'),
    h(
      'header',
      {},
      h('span', { class: 'brand' }, 'Platform console'),
      h('nav', { 'aria-label': 'Main' }, h('ul', {}, ...navLinks.map((a) => h('li', {}, a)))),
      h('span', { class: 'who' }, whoami(self)),
      logout,
    ),
    main,
  );
  const api = ApiClient.forGroup(prefix, config, key);
  // One controller per shown view: leaving it (another route, logging out) ends its watches.
  let leaving = new AbortController();
  const render = (): void => {
    leaving.abort();
    leaving = new AbortController();
    const ctx: Context = {
      api,
      self,
      signal: leaving.signal,
      go: (route) => {
        location.hash = route;
      },
    };
    const segments = currentSegments(location.hash);
    const found = match(ROUTES, segments);
    if (!found) {
      location.hash = link('secrets');
      return;
    }
    for (const a of navLinks) {
      if (a.getAttribute('href') === link(found.route.pattern[0] ?? ''))
        a.setAttribute('aria-current', 'page');
      else a.removeAttribute('aria-current');
    }
    const route = ROUTES.find((r) => r.name === found.route.name);
    route
      ?.view(ctx, main, found.params)
      .catch((err: unknown) => replace(main, h('p', { role: 'alert', class: 'alert' }, messageOf(err))));
  };
  window.onhashchange = render;
  render();
}

async function start(): Promise<void> {
  let config: ConsoleConfig;
  try {
    config = await loadConfig();
  } catch (err) {
    replace(app, h('main', {}, h('p', { role: 'alert', class: 'alert' }, messageOf(err))));
    return;
  }
  const key = savedKey();
  if (!key) {
    showLogin(config);
    return;
  }
  try {
    // A kept key is checked again: it may have been disabled or expired meanwhile.
    showConsole(config, key, await checkKey(prefix, config, key));
  } catch {
    forgetKey();
    showLogin(config);
  }
}

void start();
