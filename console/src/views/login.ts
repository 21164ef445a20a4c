// The login form: the key is checked with POST selves before it is kept.

import { ApiClient, ApiError, messageOf, type ConsoleConfig } from '../api.js';
import type { SelfStatus } from '../context.js';
import { alertBox, field, h } from '../dom.js';

export function loginView(
  prefix: string,
  config: ConsoleConfig,
  onLoggedIn: (key: string, self: SelfStatus) => void,
): HTMLElement {
  const input = h('input', { type: 'password', name: 'access-key', autocomplete: 'off', required: true });
  const alert = alertBox();
  const submit = h('button', { type: 'submit' }, 'Log in');
  const form = h(
    'form',
    { class: 'login', 'aria-labelledby': 'login-title' },
    h('h1', { id: 'login-title' }, 'Platform console'),
    field('Access key', 'access-key', input),
    submit,
    alert.el,
  );
  form.addEventListener('submit', (ev) => {
    ev.preventDefault();
    const key = input.value.trim();
    if (!key) {
      alert.show('Enter an access key');
      return;
    }
    submit.disabled = true;
    alert.show(undefined);
    checkKey(prefix, config, key)
      .then((self) => onLoggedIn(key, self))
      .catch((err: unknown) => {
        // An unknown key gets a bare 401; a disabled or expired one the server's own reason.
        alert.show(err instanceof ApiError && err.isBareUnauthorized ? 'Invalid access key' : messageOf(err));
        input.focus();
      })
      .finally(() => {
        submit.disabled = false;
      });
  });
  return h('main', { id: 'main' }, form);
}

export async function checkKey(prefix: string, config: ConsoleConfig, key: string): Promise<SelfStatus> {
  const api = ApiClient.forGroup(prefix, config, key);
  const self = await api.post<{ status?: SelfStatus }>('/selves', {
    apiVersion: `${config.group}/${config.version}`,
    kind: 'Self',
    metadata: {},
    spec: {},
  });
  return self.status ?? {};
}
