/**
 * The live stream: one Server-Sent Events stream per open page (a stream endpoint of the
 * application, so heartbeats, back-pressure and closing on shutdown are the ones every stream
 * has), fed by one shared ticker that runs only while a page is open. Each tick builds the views
 * once for every page, as one JSON text (a string message, so the stream does not walk it again):
 * `snapshot` (Overview, Event Server, Schedules, Traces) every tick, `queues`
 * every few ticks (it asks the engines). A page that falls behind is closed by its stream; the
 * browser reconnects. Internal.
 *
 * @module
 */

import type { TimerHandle } from "@fw/runtime";
import { eventServerView, overview, queues, scheduleView, traceList } from "./_views.ts";
import type { ViewSources } from "./_views.ts";

/** Tick settings. */
export interface FeedTiming {
  /** Ms between snapshots. */
  readonly intervalMs: number;
  /** Snapshots between two `queues` events. */
  readonly queuesEvery: number;
}

/** One open page: the stream endpoint's context. */
export interface PageStream {
  /** Sends one named event (not awaited: the stream closes a page that stops reading). */
  send(message: string, options: { event: string }): Promise<void>;
  /** Aborts when the page goes (or the application stops). */
  readonly signal: AbortSignal;
}

/** Feeds every open page. */
export class Feed {
  readonly #pages = new Set<PageStream>();
  readonly #sources: ViewSources;
  readonly #timing: FeedTiming;
  #timer: TimerHandle | undefined;
  #ticks = 0;
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

  /**
   * Serves one page until it goes: the first snapshot and queues at once, then every tick.
   *
   * @param page The stream endpoint's context.
   */
  async attach(page: PageStream): Promise<void> {
    if (page.signal.aborted) return;
    this.#pages.add(page);
    if (this.#pages.size === 1) this.#ticks = 0;
    const gone = new Promise<void>((resolve) =>
      page.signal.addEventListener("abort", () => resolve(), { once: true })
    );
    await this.#tick(page);
    await gone;
    this.#drop(page);
  }

  /** Stops the ticker (the application stops; its streams are closed by the application). */
  close(): void {
    this.#pages.clear();
    this.#stop();
  }

  #drop(page: PageStream): void {
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
  async #tick(only?: PageStream): Promise<void> {
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

  #send(event: string, data: unknown, only?: PageStream): void {
    const text = JSON.stringify(data); // once for every page
    for (const page of only ? [only] : this.#pages) {
      if (!this.#pages.has(page) || page.signal.aborted) continue;
      // a page that stops reading is closed by the stream (its send() rejects): forget it
      page.send(text, { event }).catch(() => this.#drop(page));
    }
  }
}
