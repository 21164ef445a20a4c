// The buffer between a watch's producer (backend callbacks, which must never block)
// and its consumer (an HTTP response that may be slow). Pushing is synchronous and
// O(1); the consumer awaits items. The producer decides what to do when the queue is
// over capacity (the watch closes, and the client re-watches from its last RV),
// so one slow consumer costs memory up to the bound but never delays anyone else.

export class WatchQueue<T> {
  private items: T[] = [];
  private head = 0;
  private ended = false;
  private wakeConsumer: (() => void) | undefined;
  private wakeProducer: (() => void) | undefined;

  constructor(readonly capacity: number) {}

  get length(): number {
    return this.items.length - this.head;
  }

  get isEnded(): boolean {
    return this.ended;
  }

  /** The most recently pushed item still queued. */
  last(): T | undefined {
    return this.length > 0 ? this.items[this.items.length - 1] : undefined;
  }

  /** True when another item fits under the capacity. */
  hasRoom(): boolean {
    return this.length < this.capacity;
  }

  /** Appends an item; ignored after end(). */
  push(item: T): void {
    if (this.ended) return;
    this.items.push(item);
    this.notifyConsumer();
  }

  /** No more items: the consumer drains what is queued, then finishes. Idempotent. */
  end(): void {
    this.ended = true;
    this.notifyConsumer();
    this.notifyProducer();
  }

  /** Ends and drops whatever is queued. */
  abort(): void {
    this.items = [];
    this.head = 0;
    this.end();
  }

  /** Resolves when the queue holds fewer than `threshold` items (or has ended). */
  async waitForRoom(threshold: number): Promise<void> {
    while (!this.ended && this.length >= threshold) {
      await new Promise<void>((resolve) => {
        this.wakeProducer = resolve;
      });
    }
  }

  /**
   * The next item, or undefined once the queue has ended and is drained. Not an async
   * function: an idle watch waits here for its whole life, and a suspended async frame
   * is heap per watch.
   */
  shift(): Promise<T | undefined> {
    if (this.length > 0) return Promise.resolve(this.take());
    if (this.ended) return Promise.resolve(undefined);
    return new Promise<T | undefined>((resolve) => {
      this.wakeConsumer = () => resolve(this.shift());
    });
  }

  /** The next item at once, or undefined when none is queued: for a consumer that is pushed to, not waiting. */
  takeNow(): T | undefined {
    return this.length > 0 ? this.take() : undefined;
  }

  private take(): T {
    const item = this.items[this.head] as T;
    this.head++;
    // Compact now and then so a long-lived watch does not keep consumed items alive.
    if (this.head > 1024 && this.head * 2 > this.items.length) {
      this.items = this.items.slice(this.head);
      this.head = 0;
    }
    this.notifyProducer();
    return item;
  }

  private notifyConsumer(): void {
    const wake = this.wakeConsumer;
    this.wakeConsumer = undefined;
    wake?.();
  }

  private notifyProducer(): void {
    const wake = this.wakeProducer;
    this.wakeProducer = undefined;
    wake?.();
  }
}
