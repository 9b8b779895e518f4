/**
 * `Scheduler`: the schedules of one application instance over its transports. The `events()`
 * plugin builds one beside its bus; tests and scripts may build one directly.
 *
 * @module
 */

import { Container, createLogger, noopMeter, systemClock } from "@fw/runtime";
import type { EventBusOptions } from "../event_bus.ts";
import type { Transport } from "../transport.ts";
import { ScheduleRunner } from "./_runner.ts";
import type { ScheduleDefinition } from "./schedule_types.ts";
import type { ScheduleRecord, ScheduleStore } from "./store.ts";

/**
 * Options of {@linkcode Scheduler}: the bus's transports and services. A schedule keeps its state
 * in the engine of one transport: its `transport` option, else `defaultTransport`, else the only
 * one.
 */
export type SchedulerOptions = Pick<
  EventBusOptions,
  | "transports"
  | "defaultTransport"
  | "clock"
  | "logger"
  | "meter"
  | "container"
  | "random"
  | "tracer"
>;

/** One schedule's state, as {@linkcode Scheduler.status} reports it. */
export interface ScheduleStatus {
  /** The schedule's name. */
  readonly name: string;
  /** Its cron expression. */
  readonly cron: string;
  /** The time zone the expression is read in. */
  readonly timezone: string;
  /** The transport whose engine keeps its state. */
  readonly transport: string;
  /** The next tick (ms since the epoch), once the scheduler runs. */
  readonly next?: number;
  /**
   * The shared record (latest tick, runs in progress on any instance, the last finished run),
   * once one was written.
   */
  readonly record?: ScheduleRecord;
  /** Attempts running on this instance now. */
  readonly runningHere: number;
  /** The error of the latest attempt that failed on this instance (tick, attempt, message). */
  readonly lastError?: {
    readonly tick: number;
    readonly attempt: number;
    readonly message: string;
  };
}

let schedulers = 0;
const attached = new WeakMap<object, Scheduler>();

/**
 * The scheduler of the application that owns `container`, while its `events()` plugin runs and
 * has schedules (the operations dashboard reads it).
 *
 * @param container The application's DI container.
 * @returns The scheduler, or `undefined`.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { Container } from "@fw/runtime";
 * import { schedulerOf } from "@fw/events";
 * assert.equal(schedulerOf(new Container()), undefined);
 * ```
 */
export function schedulerOf(container: object): Scheduler | undefined {
  return attached.get(container);
}

/**
 * Makes `scheduler` the one {@linkcode schedulerOf} answers for `container`. Internal to the
 * `events()` plugin.
 *
 * @param container The application's DI container.
 * @param scheduler The scheduler.
 * @returns A function that undoes it.
 */
export function attachScheduler(container: object, scheduler: Scheduler): () => void {
  attached.set(container, scheduler);
  return () => {
    if (attached.get(container) === scheduler) attached.delete(container);
  };
}

/**
 * Runs schedules: each tick of each schedule once across every instance that shares its
 * transport.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { ManualClock } from "@fw/runtime";
 * import { MemoryBroker, schedule, Scheduler } from "@fw/events";
 *
 * const clock = new ManualClock(Date.UTC(2030, 0, 1));
 * const broker = new MemoryBroker({ clock });
 * const ticks: string[] = [];
 * const every = schedule("tick").options({ cron: "*\/10 * * * * *" })
 *   .handle((run) => void ticks.push(run.scheduledAt.toISOString()));
 * // Two instances on one broker: each tick still runs once.
 * const a = new Scheduler({ transports: { memory: broker }, clock });
 * const b = new Scheduler({ transports: { memory: broker }, clock });
 * a.add(every);
 * b.add(every);
 * await a.start();
 * await b.start();
 * await clock.advance(20_000);
 * await a.stop();
 * await b.stop();
 * assert.deepEqual(ticks, ["2030-01-01T00:00:10.000Z", "2030-01-01T00:00:20.000Z"]);
 * ```
 */
export class Scheduler {
  readonly #o: SchedulerOptions;
  readonly #defs: Array<{ def: ScheduleDefinition; source?: string; transport: string }> = [];
  readonly #stores = new Map<Transport, ScheduleStore>();
  readonly #runners: ScheduleRunner[] = [];
  readonly #id = `${Date.now().toString(36)}-${(++schedulers).toString(36)}-${
    crypto.randomUUID().slice(0, 8)
  }`;
  #started = false;

  /**
   * Creates a scheduler; add schedules, then start it.
   *
   * @param options Transports and services.
   */
  constructor(options: SchedulerOptions) {
    this.#o = options;
  }

  /** This instance's id, as it appears in the lease of the runs it holds. */
  get instanceId(): string {
    return this.#id;
  }

  /** The schedules added. */
  get schedules(): readonly ScheduleDefinition[] {
    return this.#defs.map((d) => d.def);
  }

  /**
   * Adds a schedule; it starts with {@linkcode Scheduler.start}.
   *
   * @param def The schedule.
   * @param source File and export it came from, for error messages.
   * @throws {TypeError} When another schedule has the same name, or its transport is unknown,
   *   ambiguous or cannot keep schedule state.
   */
  add(def: ScheduleDefinition, source?: string): void {
    const where = source ? `${source} (schedule "${def.name}")` : `Schedule "${def.name}"`;
    const twin = this.#defs.find((d) => d.def.name === def.name);
    if (twin) {
      throw new TypeError(
        `Duplicate schedule name "${def.name}": ${source ?? "a schedule"} and ${
          twin.source ?? "another schedule"
        }`,
      );
    }
    const names = Object.keys(this.#o.transports);
    const name = def.options.transport ?? this.#o.defaultTransport ??
      (names.length === 1 ? names[0] : undefined);
    if (name === undefined) {
      throw new TypeError(
        `${where} needs a "transport" option: the app has several transports (${
          names.map((n) => `"${n}"`).join(", ")
        }) and no "defaultTransport"`,
      );
    }
    const transport = this.#o.transports[name];
    if (!transport) {
      throw new TypeError(
        `Invalid schedule option "transport" of ${where}: "${name}" is not a key of transports (${
          names.map((n) => `"${n}"`).join(", ")
        })`,
      );
    }
    if (typeof transport.scheduleStore !== "function") {
      throw new TypeError(
        `${where} cannot run on transport "${name}" (${transport.name}): it keeps no schedule state; use the memory broker, Deno KV, Redis, PostgreSQL or NATS`,
      );
    }
    this.#defs.push({ def, transport: name, ...(source ? { source } : {}) });
  }

  /**
   * Starts every schedule: a first look at its state (catch-up), then its timer.
   *
   * @throws {TypeError} Naming the schedule, when a cron expression is invalid (checked before
   *   any schedule starts).
   */
  async start(): Promise<void> {
    if (this.#started) return;
    const o = this.#o;
    // Loaded here rather than imported: importing @fw/events loads no npm package.
    const { compileCron } = await import("./_cron.ts");
    const compiled = this.#defs.map(({ def, source }) => {
      try {
        return compileCron(def.options.cron, def.options.timezone);
      } catch (err) {
        throw new TypeError(
          `Invalid schedule option "cron" for ${
            source ? `${source} (schedule "${def.name}")` : `schedule "${def.name}"`
          }: "${def.options.cron}": ${(err as Error).message}`,
        );
      }
    });
    this.#started = true;
    for (const [i, { def, transport }] of this.#defs.entries()) {
      const t = o.transports[transport];
      let store = this.#stores.get(t);
      if (!store) this.#stores.set(t, store = t.scheduleStore!());
      const runner = new ScheduleRunner(def, compiled[i], {
        store,
        instance: this.#id,
        clock: o.clock ?? systemClock,
        logger: o.logger ?? createLogger(),
        meter: o.meter ?? noopMeter,
        container: o.container ?? new Container(),
        random: o.random ?? Math.random,
        ...(o.tracer?.enabled ? { tracer: o.tracer } : {}),
      });
      this.#runners.push(runner);
      await runner.start();
    }
  }

  /**
   * Each schedule's state: its stored record (read from its engine now), its next tick and this
   * instance's part in it, in the order the schedules were added. Before
   * {@linkcode Scheduler.start} only the definitions are known.
   *
   * @returns One entry per schedule.
   */
  async status(): Promise<ScheduleStatus[]> {
    return await Promise.all(this.#defs.map(async ({ def, transport }, i) => {
      const base = {
        name: def.name,
        cron: def.options.cron,
        timezone: def.options.timezone,
        transport,
      };
      const runner = this.#runners[i];
      return runner ? { ...base, ...await runner.status() } : { ...base, runningHere: 0 };
    }));
  }

  /** Stops the timers and waits for the runs of this instance to finish and be recorded. */
  async stop(): Promise<void> {
    const runners = this.#runners.splice(0);
    await Promise.all(runners.map((r) => r.stop()));
    this.#started = false;
  }
}
