/**
 * `handler(Topic)`: declares a subscriber with options, a filter, injected providers and the
 * handle function.
 *
 * @module
 */

import type { ProviderMap, SchemaLike } from "@fw/runtime";
import { checkProviders } from "./_providers.ts";
import { isTopic, type Topic } from "./topic.ts";
import type {
  HandlerBuilder,
  HandlerDefinition,
  HandlerFilter,
  HandlerOptions,
  ResolvedHandlerOptions,
} from "./handler_types.ts";

/** Handler option defaults. */
export const HANDLER_DEFAULTS: ResolvedHandlerOptions = Object.freeze({
  distribution: "competing",
  maxRetries: 10,
  maxBackoff: 60_000,
  jitter: 0.1,
  timeout: 30_000,
  concurrency: 0,
  queueLimit: 0,
  overflow: "throw",
  dlq: true,
  ack: "auto",
});

const KNOWN = new Set([
  "group",
  "distribution",
  "maxRetries",
  "maxBackoff",
  "jitter",
  "timeout",
  "concurrency",
  "queueLimit",
  "overflow",
  "dlq",
  "ack",
]);

function fail(topicName: string, option: string, expected: string, got: unknown): never {
  throw new TypeError(
    `Invalid handler option "${option}" for topic "${topicName}": expected ${expected}, got ${
      JSON.stringify(got) ?? String(got)
    }`,
  );
}

function checkOptions(topicName: string, o: HandlerOptions): HandlerOptions {
  if (typeof o !== "object" || o === null) fail(topicName, "options", "an object", o);
  for (const key of Object.keys(o)) {
    if (!KNOWN.has(key)) {
      throw new TypeError(
        `Unknown handler option "${key}" for topic "${topicName}": use ${[...KNOWN].join(", ")}`,
      );
    }
  }
  const int = (k: keyof HandlerOptions, min: number) => {
    const v = o[k];
    if (v !== undefined && (!Number.isInteger(v) || (v as number) < min)) {
      fail(topicName, k, `an integer >= ${min}`, v);
    }
  };
  int("maxRetries", 0);
  int("maxBackoff", 0);
  int("timeout", 1);
  int("concurrency", 0);
  int("queueLimit", 0);
  if (o.group !== undefined && (typeof o.group !== "string" || !o.group)) {
    fail(topicName, "group", "a non-empty string", o.group);
  }
  if (
    o.distribution !== undefined && o.distribution !== "competing" && o.distribution !== "broadcast"
  ) {
    fail(topicName, "distribution", '"competing" or "broadcast"', o.distribution);
  }
  if (o.overflow !== undefined && o.overflow !== "throw" && o.overflow !== "drop") {
    fail(topicName, "overflow", '"throw" or "drop"', o.overflow);
  }
  if (o.ack !== undefined && o.ack !== "auto" && o.ack !== "manual") {
    fail(topicName, "ack", '"auto" or "manual"', o.ack);
  }
  if (o.dlq !== undefined && typeof o.dlq !== "boolean") fail(topicName, "dlq", "a boolean", o.dlq);
  if (
    o.jitter !== undefined &&
    (typeof o.jitter !== "number" || !(o.jitter >= 0 && o.jitter <= 1))
  ) fail(topicName, "jitter", "a number from 0 to 1", o.jitter);
  return o;
}

interface State {
  topic: Topic;
  options: ResolvedHandlerOptions;
  filter?: HandlerFilter;
  inject?: ProviderMap;
  name?: string;
}

class Builder {
  readonly #s: State;
  constructor(state: State) {
    this.#s = state;
  }
  #with(patch: Partial<State>): Builder {
    return new Builder({ ...this.#s, ...patch });
  }
  options(options: HandlerOptions): Builder {
    const checked = checkOptions(this.#s.topic.name, options);
    return this.#with({ options: Object.freeze({ ...this.#s.options, ...checked }) });
  }
  filter(filter: HandlerFilter): Builder {
    const attrs = filter?.attributes;
    if (typeof attrs !== "object" || attrs === null) {
      throw new TypeError(
        `Invalid .filter() for topic "${this.#s.topic.name}": expected { attributes: { key: "value" } }`,
      );
    }
    for (const [k, v] of Object.entries(attrs)) {
      if (typeof v !== "string") {
        throw new TypeError(
          `Invalid .filter() attribute "${k}" for topic "${this.#s.topic.name}": expected a string value`,
        );
      }
    }
    return this.#with({ filter: { attributes: Object.freeze({ ...attrs }) } });
  }
  inject(providers: ProviderMap): Builder {
    return this.#with({ inject: checkProviders(providers) });
  }
  named(name: string): Builder {
    if (typeof name !== "string" || !name) {
      throw new TypeError("Invalid handler name: expected a non-empty string");
    }
    return this.#with({ name });
  }
  handle(fn: (...args: never[]) => unknown): HandlerDefinition {
    if (typeof fn !== "function") {
      throw new TypeError(
        `Invalid .handle() argument for topic "${this.#s.topic.name}": expected a function`,
      );
    }
    const s = this.#s;
    return Object.freeze({
      kind: "handler" as const,
      topic: s.topic,
      options: s.options,
      fn,
      ...(s.filter ? { filter: s.filter } : {}),
      ...(s.inject ? { inject: s.inject } : {}),
      ...(s.name ? { name: s.name } : {}),
    });
  }
}

/**
 * Starts a handler definition for a topic.
 *
 * @param t The topic to subscribe to.
 * @returns A builder; finish it with `.handle(fn)`.
 * @throws {TypeError} When `t` is not a topic, or later for invalid options.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { handler, Int, topic } from "@fw/events";
 * const Tick = topic("clock.tick", { n: Int });
 * const onTick = handler(Tick)
 *   .options({ group: "ticks", maxRetries: 3 })
 *   .handle((msg) => {
 *     console.log(msg.payload.n);
 *   });
 * assert.equal(onTick.options.maxRetries, 3);
 * assert.equal(onTick.options.timeout, 30000);
 * ```
 */
export function handler<S extends SchemaLike>(t: Topic<S>): HandlerBuilder<S, undefined> {
  if (!isTopic(t)) {
    throw new TypeError("Invalid handler() argument: expected a topic made with topic()");
  }
  return new Builder({ topic: t, options: HANDLER_DEFAULTS }) as unknown as HandlerBuilder<
    S,
    undefined
  >;
}

/**
 * True when `value` is a handler definition made by {@linkcode handler}.
 *
 * @param value Anything (a module export).
 * @returns Whether it is a handler definition.
 */
export function isHandlerDefinition(value: unknown): value is HandlerDefinition {
  return typeof value === "object" && value !== null &&
    (value as HandlerDefinition).kind === "handler" && isTopic((value as HandlerDefinition).topic);
}

/**
 * The name a handler goes by in logs and dead letters, and the consumer group it joins: `name`
 * (else its own name, its `group`, its topic's name), and its `group` option, else that name.
 * The bus registers handlers under these; the `events()` plugin checks groups with them before
 * the bus exists.
 *
 * @param definition The handler.
 * @param name The name it was registered under, if any (its file and export).
 * @returns Its name and its group.
 */
export function handlerIdentity(
  definition: HandlerDefinition,
  name?: string,
): { readonly name: string; readonly group: string } {
  const handlerName = name ?? definition.name ?? definition.options.group ??
    definition.topic.name;
  return { name: handlerName, group: definition.options.group ?? handlerName };
}
