// The access key for this tab: sessionStorage (gone when the tab closes), never
// localStorage or a cookie, so no other tab or request carries it.

const KEY = 'platform-console.access-key';

export function savedKey(): string | undefined {
  return sessionStorage.getItem(KEY) ?? undefined;
}

export function saveKey(key: string): void {
  sessionStorage.setItem(KEY, key);
}

export function forgetKey(): void {
  sessionStorage.removeItem(KEY);
}
