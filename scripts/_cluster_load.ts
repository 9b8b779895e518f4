/**
 * The load of `deno task cluster`, all from this one process and all through the balancer: order
 * writes at a fixed rate (each retried with the same id until it is accepted: the id makes the
 * retry safe), reads of accepted orders, and `eventClient` subscribers of the live topic, each
 * recording the ids it receives.
 *
 * @module
 */

import { pause } from "./_cluster_instances.ts";
import { SseSubscriber, type Subscriber, WsSubscriber } from "./_cluster_subscribers.ts";

/** Answers of one kind of request. */
export class HttpTally {
  /** Requests sent. */
  sent = 0;
  /** Requests that got no HTTP answer at all (reset, refused, timed out). */
  unanswered = 0;
  /** Why requests went unanswered: error name and message, with counts. */
  readonly failures = new Map<string, number>();
  /** Answers by status. */
  readonly statuses = new Map<number, number>();

  /** Answers outside 200..299. */
  get non2xx(): number {
    let n = 0;
    for (const [status, count] of this.statuses) if (status < 200 || status > 299) n += count;
    return n;
  }

  /** `502x3 503x1` style summary of the non-2xx answers. */
  get non2xxDetail(): string {
    return [...this.statuses].filter(([s]) => s < 200 || s > 299).map(([s, n]) => `${s}x${n}`)
      .join(" ");
  }

  async send(url: string, init: RequestInit): Promise<number | undefined> {
    this.sent++;
    try {
      // longer than HAProxy's `timeout server` (30 s): a slow instance is answered 504 by HAProxy
      const res = await fetch(url, { ...init, signal: AbortSignal.timeout(45_000) });
      await res.body?.cancel();
      this.statuses.set(res.status, (this.statuses.get(res.status) ?? 0) + 1);
      return res.status;
    } catch (error) {
      this.unanswered++;
      const why = `${(error as Error).name}: ${(error as Error).message}`.slice(0, 80);
      this.failures.set(why, (this.failures.get(why) ?? 0) + 1);
      return undefined;
    }
  }
}

/** The running load; `stop()` ends the writes and reads and waits for those in flight. */
export class Load {
  readonly writes = new HttpTally();
  readonly reads = new HttpTally();
  /** Order ids that got a 2xx answer. */
  readonly accepted = new Set<string>();
  /** Order ids given up on (never accepted after every retry). */
  readonly abandoned = new Set<string>();
  readonly subscribers: Subscriber[] = [];
  readonly #inFlight = new Set<Promise<void>>();
  #running = true;
  #loops: Promise<void>[] = [];

  constructor(readonly base: string, readonly rate: number) {}

  /** Starts the write and read loops. */
  start(): void {
    this.#loops = [
      this.#tick(this.rate, () => this.#order()),
      this.#tick(this.rate, () => this.#read()),
    ];
  }

  async #tick(perSecond: number, run: () => Promise<void>): Promise<void> {
    const interval = 1000 / perSecond;
    const start = performance.now();
    for (let k = 0; this.#running; k++) {
      const wait = start + k * interval - performance.now();
      if (wait > 0) await pause(wait);
      if (!this.#running) break;
      const p = run().finally(() => this.#inFlight.delete(p));
      this.#inFlight.add(p);
    }
  }

  async #order(): Promise<void> {
    const id = crypto.randomUUID();
    const body = JSON.stringify({ id, qty: 1 + Math.floor(Math.random() * 5) });
    for (let attempt = 0; attempt < 40; attempt++) {
      const status = await this.writes.send(`${this.base}/orders`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body,
      });
      if (status !== undefined && status >= 200 && status < 300) {
        this.accepted.add(id);
        return;
      }
      await pause(250);
    }
    this.abandoned.add(id);
  }

  async #read(): Promise<void> {
    const ids = [...this.accepted].slice(-50);
    if (ids.length === 0) return;
    await this.reads.send(`${this.base}/orders/${ids[Math.floor(Math.random() * ids.length)]}`, {});
  }

  /**
   * Opens `ws` `eventClient` and `sse` `EventSource` subscribers, 20 at a time, each after the id
   * `from()` gives at that moment.
   *
   * @param ws WebSocket subscribers to open.
   * @param sse SSE subscribers to open.
   * @param topic The live topic's name.
   * @param from The latest id published so far.
   */
  async subscribe(ws: number, sse: number, topic: string, from: () => string): Promise<void> {
    for (let i = 0; i < ws + sse; i++) {
      this.subscribers.push(
        i < ws
          ? new WsSubscriber(this.base, topic, from())
          : new SseSubscriber(this.base, topic, from()),
      );
      if (i % 20 === 19) await pause(100);
    }
  }

  /** Stops writes and reads and waits for the requests in flight (with their retries). */
  async stop(): Promise<void> {
    this.#running = false;
    await Promise.all(this.#loops);
    while (this.#inFlight.size > 0) await Promise.all([...this.#inFlight]);
  }

  /** Closes every subscriber. */
  close(): void {
    for (const s of this.subscribers) s.close();
  }
}
