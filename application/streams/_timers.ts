/**
 * One shared timer per clock for the deadlines of every open stream connection: SSE heartbeats
 * and WebSocket idle timeouts. A connection holds one small {@linkcode Deadline} instead of a
 * timer of its own (a runtime timer object, its callback closure and the runtime's bookkeeping),
 * which is most of what an idle connection costs beyond the socket itself.
 *
 * Deadlines sit in a binary min-heap; the clock's single timer is armed for the earliest one.
 * When it fires, every deadline that is due runs, earliest first (ties in the order they were
 * set), and the timer is armed again for the next one. With no deadline left the timer is
 * cleared, so a `ManualClock` shows no pending timer once every connection is gone.
 *
 * @module
 */

import type { Clock, TimerHandle } from "@fw/runtime";

/** Called when a deadline is due: a connection's heartbeat or idle check. */
export interface DeadlineOwner {
  /** Runs the connection's timed work (it may set the deadline again). */
  onDeadline(): void;
}

/** One connection's deadline on a clock's shared timer; set and cleared as often as needed. */
export class Deadline {
  /**
   * When it is due, in ms since the clock's timers were created (a small integer, which the
   * engine stores in the object rather than in a number box of its own); meaningful while
   * `index >= 0`.
   */
  at = 0;
  /** Position in the heap, or -1 when not set. */
  index = -1;
  /** Order of setting, to keep ties in order. */
  seq = 0;
  readonly #timers: ClockTimers;
  readonly #owner: DeadlineOwner;

  /**
   * @param clock The clock whose shared timer this deadline uses.
   * @param owner What runs when the deadline is due; omitted, the deadline itself (a subclass
   *   that implements `onDeadline`, so a connection needs one object, not two).
   */
  constructor(clock: Clock, owner?: DeadlineOwner) {
    this.#timers = timersOf(clock);
    this.#owner = owner ?? (this as unknown as DeadlineOwner);
  }

  /**
   * Sets (or moves) the deadline to `ms` from now.
   *
   * @param ms Milliseconds from the clock's now.
   */
  set(ms: number): void {
    this.#timers.set(this, ms);
  }

  /** Clears the deadline; nothing runs. */
  clear(): void {
    if (this.index >= 0) this.#timers.remove(this);
  }

  /** Runs the owner (called by the shared timer). */
  fire(): void {
    this.#owner.onDeadline();
  }
}

const byClock = new WeakMap<Clock, ClockTimers>();

function timersOf(clock: Clock): ClockTimers {
  let timers = byClock.get(clock);
  if (timers === undefined) byClock.set(clock, timers = new ClockTimers(clock));
  return timers;
}

/**
 * `t` as the engine's small integer when it is a whole number: an object field that only ever
 * holds those stores them in place, while a computed `Date.now()` difference would otherwise be
 * a boxed number of 16 bytes per connection.
 */
export function small(t: number): number {
  const i = Math.trunc(t);
  return i === t ? i : t;
}

function before(a: Deadline, b: Deadline): boolean {
  return a.at < b.at || (a.at === b.at && a.seq < b.seq);
}

/** The heap of deadlines of one clock and its one timer. */
class ClockTimers {
  readonly #clock: Clock;
  readonly #heap: Deadline[] = [];
  #seq = 0;
  #timer: TimerHandle | undefined;
  /** The deadline the timer is armed for. */
  #armedAt = Infinity;
  #running = false;
  /** Clock time of creation: deadlines count from here. */
  readonly #epoch: number;

  constructor(clock: Clock) {
    this.#clock = clock;
    this.#epoch = clock.now();
  }

  #now(): number {
    return this.#clock.now() - this.#epoch;
  }

  set(d: Deadline, ms: number): void {
    const delay = Number.isFinite(ms) && ms > 0 ? ms : 0;
    if (d.index >= 0) this.remove(d, false);
    d.at = small(this.#now() + delay);
    d.seq = this.#seq++;
    d.index = this.#heap.length;
    this.#heap.push(d);
    this.#up(d.index);
    this.#arm();
  }

  remove(d: Deadline, arm = true): void {
    const heap = this.#heap;
    const i = d.index;
    d.index = -1;
    const last = heap.pop()!;
    if (last !== d) {
      heap[i] = last;
      last.index = i;
      this.#down(i);
      this.#up(last.index);
    }
    if (arm) this.#arm();
  }

  /** Arms the timer for the earliest deadline, or clears it when there is none. */
  #arm(): void {
    if (this.#running) return; // #fire re-arms once it is done
    const first = this.#heap[0];
    const at = first === undefined ? Infinity : first.at;
    if (at === this.#armedAt) return;
    if (this.#timer !== undefined) this.#clock.clearTimeout(this.#timer);
    this.#timer = undefined;
    this.#armedAt = at;
    if (first !== undefined) {
      this.#timer = this.#clock.setTimeout(this.#fire, at - this.#now());
    }
  }

  readonly #fire = (): void => {
    this.#timer = undefined;
    this.#armedAt = Infinity;
    this.#running = true;
    try {
      const now = this.#now();
      const heap = this.#heap;
      while (heap.length > 0 && heap[0].at <= now) {
        const d = heap[0];
        this.remove(d, false);
        try {
          d.fire();
        } catch (error) {
          // A deadline's work must not stop the others; report it as an uncaught error would be.
          queueMicrotask(() => {
            throw error;
          });
        }
      }
    } finally {
      this.#running = false;
      this.#arm();
    }
  };

  #up(i: number): void {
    const heap = this.#heap;
    const d = heap[i];
    while (i > 0) {
      const p = (i - 1) >> 1;
      if (!before(d, heap[p])) break;
      heap[i] = heap[p];
      heap[i].index = i;
      i = p;
    }
    heap[i] = d;
    d.index = i;
  }

  #down(i: number): void {
    const heap = this.#heap;
    const n = heap.length;
    const d = heap[i];
    for (;;) {
      const l = 2 * i + 1;
      if (l >= n) break;
      const r = l + 1;
      const c = r < n && before(heap[r], heap[l]) ? r : l;
      if (!before(heap[c], d)) break;
      heap[i] = heap[c];
      heap[i].index = i;
      i = c;
    }
    heap[i] = d;
    d.index = i;
  }
}
