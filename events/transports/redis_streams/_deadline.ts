/**
 * Internal to the Redis Streams transport: a bound on how long a publish waits for Redis. While
 * Redis is unreachable the client queues commands and sends them after the reconnect; a publish
 * that has had no reply for `ms` rejects instead of waiting without end. One timer serves every
 * outstanding publish (deadlines grow in call order), so the hot path allocates one small record.
 *
 * @module
 */

interface Waiting {
  readonly deadline: number;
  /** Rejects with the time-out error, or with the closed error when `closed` is true. */
  reject: ((closed: boolean) => void) | undefined;
}

/**
 * Waits for `promise` to settle (either way) until the instant `end` (`performance.now()` time).
 *
 * @param promise The work (its rejection is swallowed here).
 * @param end The instant to stop waiting at.
 * @returns `true` when it settled in time, `false` when the time ran out.
 */
export function settleBy(promise: Promise<unknown>, end: number): Promise<boolean> {
  return new Promise<boolean>((resolve) => {
    const timer = setTimeout(() => resolve(false), Math.max(0, end - performance.now()));
    const done = () => {
      clearTimeout(timer);
      resolve(true);
    };
    promise.then(done, done);
  });
}

/** Rejects promises that take longer than a bound. */
export class Deadlines {
  readonly #ms: number;
  readonly #queue: Waiting[] = [];
  #head = 0;
  #timer: ReturnType<typeof setTimeout> | undefined;

  /** @param ms The bound. */
  constructor(ms: number) {
    this.#ms = ms;
  }

  /**
   * Resolves like `promise`, or rejects with `error()` when it has not settled within the bound.
   *
   * @param promise The work.
   * @param error Builds the time-out error.
   * @param closed Builds the error for a promise still waiting when {@linkcode Deadlines.stop}
   *   is called.
   */
  bound<T>(promise: Promise<T>, error: () => Error, closed: () => Error = error): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      const w: Waiting = { deadline: performance.now() + this.#ms, reject: undefined };
      w.reject = (stopped) => reject(stopped ? closed() : error());
      this.#queue.push(w);
      if (this.#timer === undefined) this.#arm();
      promise.then((v) => {
        w.reject = undefined;
        resolve(v);
      }, (err) => {
        w.reject = undefined;
        reject(err);
      });
    });
  }

  #arm(): void {
    const q = this.#queue;
    while (this.#head < q.length && q[this.#head].reject === undefined) this.#head++;
    if (this.#head >= q.length) {
      q.length = 0;
      this.#head = 0;
      return;
    }
    if (this.#head > 1024) {
      q.splice(0, this.#head);
      this.#head = 0;
    }
    const wait = Math.max(0, q[this.#head].deadline - performance.now()) + 1;
    this.#timer = setTimeout(this.#fire, wait);
  }

  #fire = (): void => {
    this.#timer = undefined;
    const q = this.#queue;
    const now = performance.now();
    while (
      this.#head < q.length && (q[this.#head].reject === undefined || q[this.#head].deadline <= now)
    ) {
      const w = q[this.#head++];
      const reject = w.reject;
      w.reject = undefined;
      reject?.(false);
    }
    this.#arm();
  };

  /** Stops the timer and rejects the promises still waiting with their closed error. */
  stop(): void {
    if (this.#timer !== undefined) clearTimeout(this.#timer);
    this.#timer = undefined;
    const q = this.#queue;
    for (let i = this.#head; i < q.length; i++) {
      const reject = q[i].reject;
      q[i].reject = undefined;
      reject?.(true);
    }
    q.length = 0;
    this.#head = 0;
  }
}
