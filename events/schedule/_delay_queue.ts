/**
 * Internal to `@fw/events`: the in-process queue of delayed messages. A binary heap ordered by
 * due time, then by arrival (so messages due at the same time leave in the order they came), with
 * one timer armed for the earliest due time: a hundred thousand waiting messages cost one timer,
 * not a hundred thousand. The memory broker keeps its delayed publishes here, in the process.
 *
 * @module
 */

import type { Clock, TimerHandle } from "@fw/runtime";

const MAX_TIMER_MS = 2 ** 31 - 1;

interface Entry<T> {
  readonly at: number;
  readonly seq: number;
  readonly value: T;
}

/** Due-time queue on a clock; `release` gets each value once its time has come. */
export class DelayQueue<T> {
  readonly #clock: Clock;
  readonly #release: (value: T) => void;
  readonly #heap: Entry<T>[] = [];
  #seq = 0;
  #timer: TimerHandle | undefined;
  #timerAt = Infinity;
  #closed = false;

  /**
   * @param clock Time and the timer.
   * @param release Called with each value when it is due, in due-time then arrival order.
   */
  constructor(clock: Clock, release: (value: T) => void) {
    this.#clock = clock;
    this.#release = release;
  }

  /** Values waiting. */
  get size(): number {
    return this.#heap.length;
  }

  /** Keeps `value` until `at` (ms since the epoch). */
  add(at: number, value: T): void {
    if (this.#closed) return;
    const heap = this.#heap;
    heap.push({ at, seq: this.#seq++, value });
    let i = heap.length - 1;
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (!before(heap[i], heap[parent])) break;
      [heap[i], heap[parent]] = [heap[parent], heap[i]];
      i = parent;
    }
    if (i === 0) this.#arm();
  }

  /** Drops every waiting value and the timer. */
  close(): void {
    this.#closed = true;
    if (this.#timer !== undefined) this.#clock.clearTimeout(this.#timer);
    this.#timer = undefined;
    this.#heap.length = 0;
  }

  #arm(): void {
    const first = this.#heap[0];
    if (first === undefined || this.#closed) return;
    if (this.#timer !== undefined) {
      if (this.#timerAt <= first.at) return;
      this.#clock.clearTimeout(this.#timer);
    }
    this.#timerAt = first.at;
    // Timers hold at most 2^31 - 1 ms: a later due time is reached in steps.
    const wait = Math.min(MAX_TIMER_MS, Math.max(0, first.at - this.#clock.now()));
    this.#timer = this.#clock.setTimeout(this.#fire, wait);
  }

  #fire = (): void => {
    this.#timer = undefined;
    this.#timerAt = Infinity;
    const now = this.#clock.now();
    while (this.#heap.length > 0 && this.#heap[0].at <= now && !this.#closed) {
      this.#release(this.#pop().value);
    }
    this.#arm();
  };

  #pop(): Entry<T> {
    const heap = this.#heap;
    const top = heap[0];
    const last = heap.pop()!;
    if (heap.length > 0) {
      heap[0] = last;
      let i = 0;
      for (;;) {
        const l = 2 * i + 1, r = l + 1;
        let m = i;
        if (l < heap.length && before(heap[l], heap[m])) m = l;
        if (r < heap.length && before(heap[r], heap[m])) m = r;
        if (m === i) break;
        [heap[i], heap[m]] = [heap[m], heap[i]];
        i = m;
      }
    }
    return top;
  }
}

function before<T>(a: Entry<T>, b: Entry<T>): boolean {
  return a.at < b.at || (a.at === b.at && a.seq < b.seq);
}
