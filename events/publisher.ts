/**
 * `getPublisher(Topic)`: the typed, validating publish function.
 *
 * The publisher finds the running application's event bus when it is called, so route files and
 * services can create publishers at module level. Rules: the payload is validated first (an
 * invalid one throws `ValidationException` with `payload.*` field errors and counts
 * `events.publish.{topic}.error`); the trace id is the `traceId` option, else the async
 * context's, else a new one; the `auth.*` attributes are taken from the context's `user` and any
 * caller attribute starting with `auth.` is ignored.
 *
 * @module
 */

import { type SchemaLike, ValidationException } from "@fw/runtime";
import type { EventBus } from "./event_bus.ts";
import { publishOnBus, type PublishOptions, type PublishReceipt } from "./_publish_hook.ts";
import { isTopic, type PayloadOf, type Topic } from "./topic.ts";

export type { PublishOptions, PublishReceipt };

/** The function returned by {@linkcode getPublisher}. */
export type Publisher<T extends Topic> = (
  payload: PayloadOf<T>,
  options?: PublishOptions,
) => Promise<PublishReceipt>;

/** Options of {@linkcode getPublisher}. */
export interface GetPublisherOptions {
  /** Publish on this bus instead of the running application's. */
  bus?: EventBus;
}

/**
 * A bus registered to be made on first use ({@linkcode activateLazyBus}); a class, so that a
 * publish tells it from a bus with `instanceof`.
 */
class LazyBus {
  /** Publishes waiting for the bus, in call order: each runs once it is there (or fails). */
  readonly waiting: Array<(error?: unknown) => void> = [];
  constructor(readonly build: () => Promise<unknown>) {}
}

// The started applications' buses, most recent last; one not made yet stands as a LazyBus.
const active: Array<EventBus | LazyBus> = [];
const needed = new WeakSet<object>();

/** What {@linkcode activateLazyBus} returns. */
export interface LazyActivation {
  /**
   * Puts the bus, once made, in the registration's place among the active buses, then runs the
   * publishes that waited for it, in call order, before anything else can publish on it.
   *
   * @param bus The bus.
   * @returns A function that undoes it.
   */
  activate(bus: EventBus): () => void;
  /**
   * Removes the registration (the start failed, or the application stopped); the publishes that
   * waited reject with `error`, or without one run again (on another running application's bus,
   * if any).
   *
   * @param error Why the bus could not be made.
   */
  undo(error?: unknown): void;
}

function remove(entry: EventBus | LazyBus): void {
  const i = active.lastIndexOf(entry);
  if (i >= 0) active.splice(i, 1);
}

/**
 * Registers a bus made on first use (the `events()` plugin on the in-process broker), in the
 * place of an active bus: a publish that finds it there waits in line and calls `build`. `build`
 * must put the bus in its place (`activate`) or `undo` the registration.
 *
 * @param build Makes, starts and activates the bus; called by each publish that finds it (it
 *   makes the bus once).
 * @returns The functions that replace or remove the registration.
 */
export function activateLazyBus(build: () => Promise<unknown>): LazyActivation {
  const entry = new LazyBus(build);
  active.push(entry);
  const flush = (error?: unknown) => {
    for (const run of entry.waiting.splice(0)) run(error);
  };
  return {
    activate(bus) {
      const i = active.lastIndexOf(entry);
      if (i >= 0) active[i] = bus;
      else active.push(bus);
      flush();
      return () => remove(bus);
    },
    undo(error) {
      remove(entry);
      flush(error);
    },
  };
}

/**
 * Says that something reads the bus of the application that owns `container` synchronously
 * ({@linkcode busOf}), so its `events()` plugin must make the bus at start rather than on first
 * use. Call it at setup or warmup (the Event Server plugin does when it forwards to handlers).
 *
 * @param container The application's container.
 */
export function needBus(container: object): void {
  needed.add(container);
}

/**
 * Whether {@linkcode needBus} was called for `container`.
 *
 * @param container The application's container.
 * @returns True when the bus must be made at start.
 */
export function busNeeded(container: object): boolean {
  return needed.has(container);
}

/**
 * Makes `bus` the one publishers use (the `events()` plugin does this on start).
 *
 * @param bus The bus.
 * @returns A function that undoes it.
 */
export function activateBus(bus: EventBus): () => void {
  active.push(bus);
  return () => remove(bus);
}

const NO_OPTIONS: PublishOptions = Object.freeze({});

const appBuses = new WeakMap<object, EventBus>();

/**
 * Records `bus` as the bus of the application that owns `container` (the `events()` plugin does
 * this on start), so parts of that application (the Event Server) reach its own bus even when
 * other applications run in the same process.
 *
 * @param container The application's DI container (shared by its modules).
 * @param bus The bus.
 * @returns A function that undoes it.
 */
export function attachBus(container: object, bus: EventBus): () => void {
  appBuses.set(container, bus);
  return () => {
    if (appBuses.get(container) === bus) appBuses.delete(container);
  };
}

/**
 * The bus of the application that owns `container`, while its `events()` plugin runs.
 *
 * @param container The application's DI container.
 * @returns The bus, or `undefined` when that application has no running `events()` plugin.
 */
export function busOf(container: object): EventBus | undefined {
  return appBuses.get(container);
}

/**
 * The bus publishers use now: the running application's (the last one activated), if any.
 *
 * @returns The bus, or `undefined` when no `events()` plugin is running (or the running one makes
 *   its bus on first use and has not yet).
 */
export function activeBus(): EventBus | undefined {
  const top = active[active.length - 1];
  return top instanceof LazyBus ? undefined : top;
}

/**
 * The application's bus is made on first use: waits in line for it, then publishes on it. Apart
 * from the publish function, whose every call would otherwise allocate a context object for the
 * variables these callbacks read.
 */
function publishWhenMade<P>(
  lazy: LazyBus,
  publish: (payload: P, opts: PublishOptions) => Promise<PublishReceipt>,
  payload: P,
  opts: PublishOptions,
): Promise<PublishReceipt> {
  return new Promise((resolve, reject) => {
    lazy.waiting.push((error) =>
      error === undefined ? publish(payload, opts).then(resolve, reject) : reject(error)
    );
    lazy.build().catch(() => {}); // a failure reaches the waiting publishes through undo()
  });
}

/**
 * Returns the publish function of a topic.
 *
 * @param t The topic.
 * @param options A specific bus (default: the running application's).
 * @returns `publish(payload, options?)`.
 * @throws {TypeError} When `t` is not a topic.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { EventBus, getPublisher, handler, Int, MemoryBroker, topic } from "@fw/events";
 * const Tick = topic("clock.tick", { n: Int });
 * const bus = new EventBus({ transports: { memory: new MemoryBroker() } });
 * const seen: number[] = [];
 * await bus.add(handler(Tick).handle((msg) => void seen.push(msg.payload.n)));
 * await bus.start();
 * const publish = getPublisher(Tick, { bus });
 * await publish({ n: 1 });
 * await assert.rejects(publish({ n: "x" } as never), /payload.n must be an integer/);
 * await bus.stop();
 * assert.deepEqual(seen, [1]);
 * ```
 */
export function getPublisher<S extends SchemaLike>(
  t: Topic<S>,
  options: GetPublisherOptions = {},
): Publisher<Topic<S>> {
  if (!isTopic(t)) {
    throw new TypeError("Invalid getPublisher() argument: expected a topic made with topic()");
  }
  const name = t.name;
  const publish: Publisher<Topic<S>> = (payload, opts = NO_OPTIONS) => {
    const top = options.bus ?? active[active.length - 1];
    if (top instanceof LazyBus) return publishWhenMade(top, publish, payload, opts);
    if (top === undefined) {
      const checked = t.validate(payload);
      if (!checked.ok) return Promise.reject(new ValidationException(checked.errors));
      return Promise.reject(
        new Error(
          `Cannot publish to topic "${name}": no events() plugin is running (start the application, or pass { bus })`,
        ),
      );
    }
    // the publish path (`_publish.ts`) loaded with the bus's module
    return publishOnBus(top, t, payload, opts);
  };
  return publish;
}
