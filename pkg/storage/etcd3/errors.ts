// Recognising etcd's revision errors. The etcd3 client turns gRPC failures into
// classes by status code (OUT_OF_RANGE for both of these), so the message, which
// etcd has kept stable since v3.0 ("etcdserver: mvcc: required revision ..."), is
// the only thing that tells compaction from a future revision.

function messageOf(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

/** etcd refused a read because the revision is older than the last compaction. */
export function isEtcdCompacted(err: unknown): boolean {
  return messageOf(err).includes('required revision has been compacted');
}

/** etcd refused a read because the revision is newer than its current one. */
export function isEtcdFutureRevision(err: unknown): boolean {
  return messageOf(err).includes('required revision is a future revision');
}
