/**
 * `topic()`: the declaration of one kind of event. A topic is pure data, a name, a
 * payload schema and routing metadata, so publishers and subscribers in any service can import
 * it without pulling in a transport.
 *
 * @module
 */

import { compile, type InferSchema, type SchemaLike, type Validator } from "@fw/runtime";

/** Options of {@linkcode topic}. */
export interface TopicOptions {
  /** Logical routing metadata: `events({ routes: [{ channel, transport }] })` matches it. */
  channel?: string;
  /** Topic contract version; required for topics published through a managed Event Server. */
  version?: string;
}

/** A declared topic: name, payload schema and options. */
export interface Topic<S extends SchemaLike = SchemaLike> {
  /** Marker that tells topics apart from other exports. */
  readonly kind: "topic";
  /** Dotted topic name, for example `orders.created`. */
  readonly name: string;
  /** The payload schema. */
  readonly schema: S;
  /** Logical channel, when given. */
  readonly channel?: string;
  /** Contract version, when given. */
  readonly version?: string;
  /** Compiled payload validator (compiled on first use, then cached). */
  readonly validate: Validator<InferSchema<S>>;
}

/** The payload type of a topic. */
export type PayloadOf<T> = T extends Topic<infer S> ? InferSchema<S> : never;

const NAME = /^[A-Za-z0-9_-]+(\.[A-Za-z0-9_-]+)*$/;

/**
 * Declares a topic.
 *
 * @param name Dotted name such as `orders.created` (letters, digits, `_`, `-`, separated by dots).
 * @param schema The payload schema (an object of schemas or a `schema()`).
 * @param options Channel and version.
 * @returns The topic.
 * @throws {TypeError} For an invalid name, schema or option.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { Int, topic, Uuid } from "@fw/events";
 * const OrderCreated = topic("orders.created", { id: Uuid, total: Int }, { channel: "orders" });
 * assert.equal(OrderCreated.name, "orders.created");
 * assert.equal(OrderCreated.validate({ id: "x", total: 1 }).ok, false);
 * ```
 */
export function topic<S extends SchemaLike>(
  name: string,
  schema: S,
  options: TopicOptions = {},
): Topic<S> {
  if (typeof name !== "string" || !NAME.test(name)) {
    throw new TypeError(
      `Invalid topic name "${String(name)}": use dotted words such as "orders.created"`,
    );
  }
  if (schema === null || (typeof schema !== "object" && typeof schema !== "function")) {
    throw new TypeError(`Invalid schema for topic "${name}": expected an object of schemas`);
  }
  if (options.channel !== undefined && (typeof options.channel !== "string" || !options.channel)) {
    throw new TypeError(
      `Invalid option "channel" for topic "${name}": expected a non-empty string`,
    );
  }
  if (options.version !== undefined && (typeof options.version !== "string" || !options.version)) {
    throw new TypeError(
      `Invalid option "version" for topic "${name}": expected a non-empty string`,
    );
  }
  // Compile now so that a broken schema fails where the topic is declared.
  const validate = compile(schema, "payload");
  const t: Topic<S> = {
    kind: "topic",
    name,
    schema,
    validate,
    ...(options.channel !== undefined ? { channel: options.channel } : {}),
    ...(options.version !== undefined ? { version: options.version } : {}),
  };
  return Object.freeze(t);
}

/**
 * The dead-letter topic of `t`: `<name>.dlq` with the same payload schema. Subscribe a
 * handler to it to receive dead letters instead of keeping them in the broker's buffer.
 *
 * @param t The original topic.
 * @returns The `.dlq` topic.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { deadLetterTopic, Int, topic } from "@fw/events";
 * assert.equal(deadLetterTopic(topic("a.b", { n: Int })).name, "a.b.dlq");
 * ```
 */
export function deadLetterTopic<S extends SchemaLike>(t: Topic<S>): Topic<S> {
  return topic(`${t.name}.dlq`, t.schema, {
    ...(t.channel !== undefined ? { channel: t.channel } : {}),
    ...(t.version !== undefined ? { version: t.version } : {}),
  });
}

/**
 * True when `value` is a topic made by {@linkcode topic}.
 *
 * @param value Anything.
 * @returns Whether it is a topic.
 */
export function isTopic(value: unknown): value is Topic {
  return typeof value === "object" && value !== null && (value as Topic).kind === "topic" &&
    typeof (value as Topic).name === "string";
}
