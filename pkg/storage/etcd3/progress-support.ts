// Whether an etcd server orders requested progress notifications after the events
// they cover. Before 3.4.31 and 3.5.13 a RequestProgress answer could overtake
// events still queued for the watch (etcd-io/etcd#15220, #17507), so a client that
// trusts it can believe it has seen a revision whose events are still on their way.
// Kubernetes gates consistent reads from its watch cache on the same versions.

export function reliableProgressRequests(version: string): boolean {
  const m = /^v?(\d+)\.(\d+)\.(\d+)/.exec(version.trim());
  if (!m) return false;
  const [major, minor, patch] = [Number(m[1]), Number(m[2]), Number(m[3])];
  if (major !== 3) return major > 3;
  if (minor === 4) return patch >= 31;
  if (minor === 5) return patch >= 13;
  return minor > 5;
}
