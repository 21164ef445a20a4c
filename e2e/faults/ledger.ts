// What the fault suite counts: the creates the server acknowledged, and what each
// watcher saw. The definitions the suite asserts on live here, in one place:
//
// - An acknowledged write is a create answered 201, with the resourceVersion of the
//   object in that answer. It is lost when, after recovery, a read of it does not find
//   the object at that resourceVersion (the objects are never changed after create).
// - A watcher saw a create when it received an ADDED event for that name at that
//   resourceVersion, or a relist (after 410 Gone) listed the object at that
//   resourceVersion or later: a relist is how client-go's reflector catches up, and
//   what it lists it has seen. A create is missed when neither happened by the end.
// - It saw it more than once (a duplicate) when a second ADDED event came for the same
//   name at the same resourceVersion: a resume that replayed what it had already sent.
// - Events arrive in resourceVersion order: every event's resourceVersion is greater
//   than that of the event, bookmark or relist before it on the same watcher, across
//   resumes. Anything else is out of order.

export interface AcknowledgedCreate {
  readonly name: string;
  readonly resourceVersion: bigint;
  /** Which replica acknowledged it. */
  readonly via: string;
}

export class AckLedger {
  readonly creates: AcknowledgedCreate[] = [];

  add(create: AcknowledgedCreate): void {
    this.creates.push(create);
  }
}

export interface WatchFigures {
  readonly events: number;
  readonly resumes: number;
  /** Lists the watch started from: the first one, and every relist after 410 Gone. */
  readonly lists: number;
  readonly duplicates: number;
  readonly outOfOrder: number;
}

export class WatchRecord {
  /** The resourceVersion to resume from: of the last event, bookmark or relist. */
  lastResourceVersion = 0n;
  private readonly added = new Map<string, bigint>();
  private readonly listed = new Map<string, bigint>();
  private events = 0;
  private resumes = 0;
  private lists = 0;
  private duplicates = 0;
  private outOfOrder = 0;
  /** The first few out-of-order or duplicate events, for the report. */
  readonly anomalies: string[] = [];

  event(type: string, name: string, resourceVersion: bigint): void {
    this.events++;
    if (resourceVersion <= this.lastResourceVersion) {
      this.outOfOrder++;
      this.note(`${type} ${name}@${resourceVersion} after ${this.lastResourceVersion}`);
    } else {
      this.lastResourceVersion = resourceVersion;
    }
    if (type !== 'ADDED') return;
    if (this.added.get(name) === resourceVersion) {
      this.duplicates++;
      this.note(`ADDED ${name}@${resourceVersion} twice`);
    }
    this.added.set(name, resourceVersion);
  }

  bookmark(resourceVersion: bigint): void {
    if (resourceVersion < this.lastResourceVersion) {
      this.outOfOrder++;
      this.note(`BOOKMARK @${resourceVersion} after ${this.lastResourceVersion}`);
      return;
    }
    this.lastResourceVersion = resourceVersion;
  }

  /** A watch was opened again from lastResourceVersion after an error or its end. */
  resumed(): void {
    this.resumes++;
  }

  /** A list (the first, or a relist after 410) answered at `listResourceVersion`: the watch goes on from there. */
  list(items: ReadonlyArray<{ name: string; resourceVersion: bigint }>, listResourceVersion: bigint): void {
    this.lists++;
    for (const item of items) this.listed.set(item.name, item.resourceVersion);
    this.lastResourceVersion = listResourceVersion;
  }

  saw(create: AcknowledgedCreate): boolean {
    return (
      this.added.get(create.name) === create.resourceVersion ||
      (this.listed.get(create.name) ?? -1n) >= create.resourceVersion
    );
  }

  missing(ledger: AckLedger): AcknowledgedCreate[] {
    return ledger.creates.filter((c) => !this.saw(c));
  }

  figures(): WatchFigures {
    return {
      events: this.events,
      resumes: this.resumes,
      lists: this.lists,
      duplicates: this.duplicates,
      outOfOrder: this.outOfOrder,
    };
  }

  private note(what: string): void {
    if (this.anomalies.length < 10) this.anomalies.push(what);
  }
}
