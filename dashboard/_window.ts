/**
 * A sliding window of one-second slots: counts, errors and a log-scale latency histogram, so a
 * route's rate, error rate and p50/p99 over the last minute cost one slot update per request.
 * Every event is counted (the rate is exact); the outcomes (errors, durations) recorded may be a
 * sample (the request middleware times a sample of the requests of a busy second).
 * Internal.
 *
 * @module
 */

/** Smallest latency bucket edge in ms; each bucket is 25% wider than the one before. */
const BASE_MS = 0.05;
const GROWTH = Math.log(1.25);
/** Buckets: 0.05 ms up to about 65 s; longer durations land in the last one. */
export const BUCKETS = 64;

/** The upper edge of bucket `i` in ms. */
export function bucketEdge(i: number): number {
  return BASE_MS * Math.exp(GROWTH * (i + 1));
}

function bucketOf(ms: number): number {
  if (!(ms > BASE_MS)) return 0;
  const i = Math.floor(Math.log(ms / BASE_MS) / GROWTH);
  return i >= BUCKETS ? BUCKETS - 1 : i;
}

interface Slot {
  second: number;
  count: number;
  /** Events whose outcome was recorded (all of them, or a sample under load). */
  observed: number;
  errors: number;
  histogram: Uint32Array | undefined;
}

/** What a window reports. */
export interface WindowSummary {
  /** Events per second over the window. */
  readonly rate: number;
  /** Events in the window. */
  readonly count: number;
  /** Share of observed events that were errors (0..1). */
  readonly errorRate: number;
  /** Median duration in ms (upper bucket edge), when durations were recorded. */
  readonly p50?: number;
  /** 99th percentile duration in ms (upper bucket edge), when durations were recorded. */
  readonly p99?: number;
}

/** Counts over the last `seconds` seconds, one slot per second. */
export class Window {
  readonly #slots: Slot[];
  /** Events since creation. */
  total = 0;
  /** Errors since creation. */
  totalErrors = 0;

  /** @param seconds Window length (slots). */
  constructor(readonly seconds: number) {
    this.#slots = Array.from(
      { length: seconds },
      () => ({ second: -1, count: 0, observed: 0, errors: 0, histogram: undefined }),
    );
  }

  #slot(nowMs: number): Slot {
    const second = Math.floor(nowMs / 1000);
    const slot = this.#slots[second % this.seconds];
    if (slot.second !== second) {
      slot.second = second;
      slot.count = 0;
      slot.observed = 0;
      slot.errors = 0;
      slot.histogram?.fill(0);
    }
    return slot;
  }

  /**
   * Counts events and records their outcome.
   *
   * @param nowMs Clock time in ms.
   * @param error Whether they failed.
   * @param durationMs Their duration, when they have one.
   * @param n How many (default 1).
   */
  add(nowMs: number, error = false, durationMs?: number, n = 1): void {
    const slot = this.#slot(nowMs);
    slot.count += n;
    this.total += n;
    this.#observe(slot, error, durationMs, n);
  }

  /**
   * Counts one event whose outcome is recorded apart (with {@linkcode Window.observe}), or not
   * at all: the dashboard's request observer times a sample of the requests.
   *
   * @param nowMs Clock time in ms.
   */
  tally(nowMs: number): void {
    this.#slot(nowMs).count++;
    this.total++;
  }

  /**
   * Records the outcome of an event counted with {@linkcode Window.tally}.
   *
   * @param nowMs Clock time in ms.
   * @param error Whether it failed.
   * @param durationMs Its duration.
   */
  observe(nowMs: number, error: boolean, durationMs: number): void {
    this.#observe(this.#slot(nowMs), error, durationMs, 1);
  }

  #observe(slot: Slot, error: boolean, durationMs: number | undefined, n: number): void {
    slot.observed += n;
    if (error) {
      slot.errors += n;
      this.totalErrors += n;
    }
    if (durationMs !== undefined) {
      (slot.histogram ??= new Uint32Array(BUCKETS))[bucketOf(durationMs)]++;
    }
  }

  /**
   * Summarises the slots of the last `seconds` seconds.
   *
   * @param nowMs Clock time in ms.
   * @returns Rate, error rate and percentiles.
   */
  summary(nowMs: number): WindowSummary {
    const now = Math.floor(nowMs / 1000);
    let count = 0, observed = 0, errors = 0, timed = 0;
    const merged = new Uint32Array(BUCKETS);
    for (const s of this.#slots) {
      if (s.second < 0 || now - s.second >= this.seconds || s.second > now) continue;
      count += s.count;
      observed += s.observed;
      errors += s.errors;
      if (s.histogram) {
        for (let i = 0; i < BUCKETS; i++) merged[i] += s.histogram[i];
      }
    }
    for (let i = 0; i < BUCKETS; i++) timed += merged[i];
    const out: { -readonly [K in keyof WindowSummary]: WindowSummary[K] } = {
      rate: count / this.seconds,
      count,
      errorRate: observed > 0 ? errors / observed : 0,
    };
    if (timed > 0) {
      out.p50 = quantile(merged, timed, 0.5);
      out.p99 = quantile(merged, timed, 0.99);
    }
    return out;
  }
}

function quantile(h: Uint32Array, total: number, q: number): number {
  const rank = Math.ceil(total * q);
  let seen = 0;
  for (let i = 0; i < BUCKETS; i++) {
    seen += h[i];
    if (seen >= rank) return Math.round(bucketEdge(i) * 1000) / 1000;
  }
  return bucketEdge(BUCKETS - 1);
}
