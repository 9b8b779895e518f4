/**
 * An in-memory publish/subscribe hub for the streaming example: numbered messages, a replay
 * buffer for clients that resume (`Last-Event-ID`), and one bounded queue per subscriber so a
 * slow subscriber is dropped instead of slowing everyone down.
 *
 * @module
 */

/** A published message with its sequence number. */
export interface Published<T> {
  /** Sequence number, from 1, increasing by one per message. */
  readonly seq: number;
  /** The message. */
  readonly value: T;
}

/** Options of {@linkcode Hub}. */
export interface HubOptions {
  /** Messages kept for replay (default 100). */
  replay?: number;
  /** Messages a subscriber may lag behind before it is dropped (default 256). */
  maxLag?: number;
}

/** Thrown to a subscriber that fell too far behind. */
export class SlowSubscriberError extends Error {
  constructor(lag: number) {
    super(`Subscriber dropped: more than ${lag} messages behind`);
    this.name = "SlowSubscriberError";
  }
}

class Subscription<T> implements AsyncIterableIterator<Published<T>> {
  queue: Published<T>[] = [];
  waiting: ((r: IteratorResult<Published<T>>) => void) | undefined;
  failWaiting: ((e: unknown) => void) | undefined;
  ended = false;
  error: unknown = undefined;

  constructor(readonly onEnd: (s: Subscription<T>) => void) {}

  push(item: Published<T>, maxLag: number): void {
    if (this.ended) return;
    const waiting = this.waiting;
    if (waiting !== undefined) {
      this.waiting = this.failWaiting = undefined;
      waiting({ done: false, value: item });
    } else if (this.queue.length >= maxLag) {
      this.fail(new SlowSubscriberError(maxLag));
    } else {
      this.queue.push(item);
    }
  }

  fail(error: unknown): void {
    this.error = error;
    this.end();
  }

  end(): void {
    if (this.ended) return;
    this.ended = true;
    this.onEnd(this);
    if (this.waiting !== undefined) {
      const [resolve, reject] = [this.waiting, this.failWaiting!];
      this.waiting = this.failWaiting = undefined;
      if (this.error !== undefined) reject(this.error);
      else resolve({ done: true, value: undefined });
    }
  }

  next(): Promise<IteratorResult<Published<T>>> {
    if (this.queue.length > 0) return Promise.resolve({ done: false, value: this.queue.shift()! });
    if (this.error !== undefined) return Promise.reject(this.error);
    if (this.ended) return Promise.resolve({ done: true, value: undefined });
    return new Promise((resolve, reject) => {
      this.waiting = resolve;
      this.failWaiting = reject;
    });
  }

  return(): Promise<IteratorResult<Published<T>>> {
    this.queue = [];
    this.end();
    return Promise.resolve({ done: true, value: undefined });
  }

  [Symbol.asyncIterator](): this {
    return this;
  }
}

/** A topic: publish messages, subscribe with an abort signal. */
export class Hub<T> {
  readonly #subscribers = new Set<Subscription<T>>();
  readonly #recent: Published<T>[] = [];
  readonly #replay: number;
  readonly #maxLag: number;
  #seq = 0;

  constructor(options: HubOptions = {}) {
    this.#replay = options.replay ?? 100;
    this.#maxLag = options.maxLag ?? 256;
  }

  /** Number of live subscribers. */
  get subscribers(): number {
    return this.#subscribers.size;
  }

  /** Sequence number of the last message (0 before the first). */
  get seq(): number {
    return this.#seq;
  }

  /** Publishes a message to every subscriber and returns its sequence number. */
  publish(value: T): number {
    const item: Published<T> = { seq: ++this.#seq, value };
    this.#recent.push(item);
    if (this.#recent.length > this.#replay) this.#recent.shift();
    for (const s of this.#subscribers) s.push(item, this.#maxLag);
    return item.seq;
  }

  /** The last `count` messages. */
  recent(count: number): Published<T>[] {
    return this.#recent.slice(-count);
  }

  /**
   * Subscribes until `signal` aborts. With `after`, first replays the kept messages that came
   * after that sequence number (a resuming client).
   */
  subscribe(signal: AbortSignal, after?: number): AsyncIterableIterator<Published<T>> {
    const onAbort = () => sub.end();
    const sub = new Subscription<T>((s) => {
      this.#subscribers.delete(s);
      signal.removeEventListener("abort", onAbort);
    });
    if (signal.aborted) {
      sub.end();
      return sub;
    }
    if (after !== undefined) {
      for (const item of this.#recent) if (item.seq > after) sub.queue.push(item);
    }
    this.#subscribers.add(sub);
    signal.addEventListener("abort", onAbort, { once: true });
    return sub;
  }
}
