/**
 * The live stream: one Server-Sent Events response per open page, fed by one shared ticker that
 * runs only while a page is open. Each tick builds the views once and sends the same bytes to
 * every page: `snapshot` (Overview, Event Server, Schedules, Traces) every tick, `queues` every
 * few ticks (it asks the engines). A page that falls behind is closed; the browser reconnects.
 * Internal.
 *
 * @module
 */

import type { TimerHandle } from "@fw/runtime";
import { eventServerView, overview, queues, scheduleView, traceList } from "./_views.ts";
import type { ViewSources } from "./_views.ts";

const encoder = new TextEncoder();
/** Unsent bytes a page may have queued before it is closed. */
const MAX_BACKLOG = 1024 * 1024;

/** Tick settings. */
export interface FeedTiming {
  /** Ms between snapshots. */
  readonly intervalMs: number;
  /** Snapshots between two `queues` events. */
  readonly queuesEvery: number;
}

type Sink = ReadableStreamDefaultController<Uint8Array>;

/** Feeds every open page. */
export class Feed {
  readonly #pages = new Set<Sink>();
  readonly #sources: ViewSources;
  readonly #timing: FeedTiming;
  #timer: TimerHandle | undefined;
  #ticks = 0;
  #id = 0;
  #busy = false;

  /**
   * @param sources What the views read.
   * @param timing Tick interval and queue cadence.
   */
  constructor(sources: ViewSources, timing: FeedTiming) {
    this.#sources = sources;
    this.#timing = timing;
  }

  /** Pages open now. */
  get pages(): number {
    return this.#pages.size;
  }

  /** A new stream for one page; the first snapshot and queues are sent at once. */
  open(): Response {
    let sink: Sink | undefined;
    const body = new ReadableStream<Uint8Array>({
      start: (controller) => {
        sink = controller;
        this.#pages.add(controller);
        controller.enqueue(encoder.encode("retry: 2000\n\n"));
        if (this.#pages.size === 1) this.#ticks = 0;
        void this.#tick(controller);
      },
      cancel: () => this.#drop(sink!),
    }, { highWaterMark: MAX_BACKLOG, size: (chunk) => chunk.byteLength });
    return new Response(body, {
      headers: {
        "content-type": "text/event-stream",
        "cache-control": "no-store",
        "x-accel-buffering": "no",
      },
    });
  }

  /** Ends every stream and the ticker (the application stops). */
  close(): void {
    for (const page of this.#pages) {
      try {
        page.close();
      } catch {
        // already closed
      }
    }
    this.#pages.clear();
    this.#stop();
  }

  #drop(page: Sink): void {
    this.#pages.delete(page);
    if (this.#pages.size === 0) this.#stop();
  }

  #stop(): void {
    if (this.#timer !== undefined) this.#sources.clock.clearTimeout(this.#timer);
    this.#timer = undefined;
  }

  #schedule(): void {
    if (this.#timer !== undefined || this.#pages.size === 0) return;
    this.#timer = this.#sources.clock.setTimeout(() => {
      this.#timer = undefined;
      void this.#tick();
    }, this.#timing.intervalMs);
  }

  /** Builds the views and sends them to `only` (a new page) or to every page. */
  async #tick(only?: Sink): Promise<void> {
    if (this.#busy && !only) return this.#schedule();
    if (!only) this.#busy = true;
    try {
      const s = this.#sources;
      const [ov, schedules] = await Promise.all([overview(s), scheduleView(s)]);
      const snapshot = {
        overview: ov,
        eventServer: eventServerView(s),
        schedules,
        traces: traceList(s),
      };
      this.#send("snapshot", snapshot, only);
      if (only || this.#ticks % this.#timing.queuesEvery === 0) {
        this.#send("queues", { transports: await queues(s) }, only);
      }
      if (!only) this.#ticks++;
    } catch (error) {
      this.#sources.logger.warn("dashboard: a live update failed", { error: String(error) });
    } finally {
      if (!only) this.#busy = false;
      this.#schedule();
    }
  }

  #send(event: string, data: unknown, only?: Sink): void {
    const bytes = encoder.encode(
      `id: ${++this.#id}\nevent: ${event}\ndata: ${JSON.stringify(data)}\n\n`,
    );
    for (const page of only ? [only] : this.#pages) {
      if (!this.#pages.has(page)) continue;
      if ((page.desiredSize ?? 0) <= 0) {
        // this page stopped reading: close it, the browser reconnects and starts afresh
        this.#drop(page);
        try {
          page.close();
        } catch {
          // already closed
        }
        continue;
      }
      page.enqueue(bytes);
    }
  }
}
