/**
 * The publish path once a bus is in hand: payload validation with the error counter, attributes
 * (the `auth.*` ones from the context's user), trace id, envelope, delay checks, then the bus.
 * `event_bus.ts` imports this module and sets {@linkcode setPublishValidated}; loading it sets
 * the publisher's entry (`_publish_hook.ts`). So `@fw/events/core` (`publisher.ts`) loads none of
 * it, nor the envelope and delay helpers: they come with the first bus.
 *
 * @module
 */

import {
  type AuthUser,
  type Clock,
  type Counter,
  tryContext,
  ValidationException,
  type Validator,
} from "@fw/runtime";
import { type Envelope, newMessageId, newTraceId } from "./envelope.ts";
import { checkMaxDelay, type DueTime, dueTime } from "./schedule/_delay.ts";
import type { Topic } from "./topic.ts";
import type { Transport, TransportPublishOptions } from "./transport.ts";
import { type PublishOptions, type PublishReceipt, setPublishOnBus } from "./_publish_hook.ts";

/** What the publish path uses of an `EventBus` (this module does not import the bus). */
interface PublishingBus {
  readonly clock: Clock;
  readonly transports: Readonly<Record<string, Transport>>;
  transportName(topic: string, channel?: string): string;
  publishCounters(topic: string): { ok: Counter; error: Counter };
  publishEnvelope(envelope: Envelope, options?: TransportPublishOptions): Promise<PublishReceipt>;
}

/** Publishes a built envelope on a bus, given the validator that produced its payload. */
export type PublishValidated = (
  bus: object,
  envelope: Envelope,
  validator: Validator<unknown>,
) => Promise<PublishReceipt>;

/**
 * `EventBus.publishEnvelope` with no options, for an envelope built here around a payload
 * `validator` produced, which no one else holds: an in-process transport tells its consumers,
 * which then copy the payload instead of validating it again. Set by `event_bus.ts` when it loads.
 */
let publishValidated: PublishValidated;

/**
 * Sets the bus's entry for validated envelopes (called once, by `event_bus.ts`).
 *
 * @param fn The bus's entry.
 */
export function setPublishValidated(fn: PublishValidated): void {
  publishValidated = fn;
}

const AUTH_CLAIMS = ["sub", "email", "azp", "client_id"] as const;
/** The attributes of an envelope published with none and no user (read-only, shared). */
const NO_ATTRIBUTES: Record<string, string> = Object.freeze({}) as Record<string, string>;

function attributesOf(topicName: string, given: unknown): Record<string, string> {
  const out: Record<string, string> = {};
  if (given === undefined) return out;
  if (typeof given !== "object" || given === null || Array.isArray(given)) {
    throw new TypeError(
      `Invalid publish option "attributes" for topic "${topicName}": expected a map of strings`,
    );
  }
  for (const [k, v] of Object.entries(given)) {
    if (typeof v !== "string") {
      throw new TypeError(
        `Invalid publish attribute "${k}" for topic "${topicName}": expected a string, got ${typeof v}`,
      );
    }
    if (!k.startsWith("auth.")) out[k] = v;
  }
  return out;
}

function optionalString(topicName: string, name: string, value: unknown): string | undefined {
  if (value === undefined) return undefined;
  if (typeof value !== "string" || value === "") {
    throw new TypeError(
      `Invalid publish option "${name}" for topic "${topicName}": expected a non-empty string`,
    );
  }
  return value;
}

/** Validates, builds the envelope and publishes it on `bus` (the publisher's entry). */
function publishOnBus(
  target: object,
  t: Topic,
  payload: unknown,
  opts: PublishOptions,
): Promise<PublishReceipt> {
  const bus = target as PublishingBus;
  const name = t.name;
  const checked = t.validate(payload);
  if (!checked.ok) {
    bus.publishCounters(name).error.add(1);
    return Promise.reject(new ValidationException(checked.errors));
  }
  let envelope: Envelope;
  let due: DueTime | undefined;
  try {
    const ctx = tryContext<{ traceId?: string; user?: AuthUser }>();
    const user = ctx?.user;
    // none given and no user: the one frozen empty map (saves an object per publish)
    const attributes = opts.attributes === undefined && !user
      ? NO_ATTRIBUTES
      : attributesOf(name, opts.attributes);
    if (user) {
      for (const claim of AUTH_CLAIMS) {
        const v = user[claim];
        if (typeof v === "string" && v) attributes[`auth.${claim}`] = v;
      }
    }
    const traceId = optionalString(name, "traceId", opts.traceId) ??
      (typeof ctx?.traceId === "string" && ctx.traceId ? ctx.traceId : newTraceId());
    envelope = {
      id: optionalString(name, "messageId", opts.messageId) ?? newMessageId(),
      topic: name,
      payload: checked.value,
      attributes,
      traceId,
      publishedAt: bus.clock.now(),
    };
    const key = optionalString(name, "key", opts.key);
    if (key !== undefined) envelope.key = key;
    const dedupeKey = optionalString(name, "dedupeKey", opts.dedupeKey);
    if (dedupeKey !== undefined) envelope.dedupeKey = dedupeKey;
    if (t.channel !== undefined) envelope.channel = t.channel;
    if (t.version !== undefined) envelope.version = t.version;
    if (opts.delay !== undefined || opts.deliverAt !== undefined) {
      due = dueTime(name, opts.delay, opts.deliverAt, envelope.publishedAt);
      if (due !== undefined) {
        const transport = bus.transportName(name, t.channel);
        const { capabilities } = bus.transports[transport];
        checkMaxDelay(name, due, envelope.publishedAt, transport, capabilities);
      }
    }
  } catch (err) {
    return Promise.reject(err);
  }
  return publishOn(bus, envelope, t.validate as Validator<unknown>, opts.tx, due);
}

/**
 * Hands a built envelope to the bus, with the options the publish asked for; with none, tells
 * the bus which validator produced the payload (an in-process transport's consumers then copy it
 * instead of validating it again).
 */
function publishOn(
  bus: PublishingBus,
  envelope: Envelope,
  validator: Validator<unknown>,
  tx: TransportPublishOptions["tx"],
  due: DueTime | undefined,
): Promise<PublishReceipt> {
  if (due !== undefined) {
    return bus.publishEnvelope(
      envelope,
      tx === undefined ? { deliverAt: due.deliverAt } : { tx, deliverAt: due.deliverAt },
    );
  }
  return tx === undefined
    ? publishValidated(bus, envelope, validator)
    : bus.publishEnvelope(envelope, { tx });
}

setPublishOnBus(publishOnBus);
