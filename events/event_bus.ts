/**
 * The event bus: the transports of one application, the routing between them, the consumers of
 * its handlers, publish metrics, and dead-letter access. The `events()` plugin builds one; tests
 * and scripts may build one directly.
 *
 * @module
 */

import {
  type Clock,
  Container,
  type Counter,
  createLogger,
  type Logger,
  type Meter,
  noopMeter,
  systemClock,
  type Tracer,
  type Validator,
} from "@fw/runtime";
import { Consumer } from "./consumer.ts";
import { checkMaxDelay } from "./schedule/_delay.ts";
import { endWith, messagingSystem, startPublishSpan } from "./_tracing.ts";
import type { Envelope } from "./envelope.ts";
import { handlerIdentity } from "./handler.ts";
import type { HandlerDefinition } from "./handler_types.ts";
import { createTransportRouter, type RouteRule, type TransportRouter } from "./routing.ts";
import type { DeadLetter, Transport, TransportPublishOptions } from "./transport.ts";
import type { PublishReceipt } from "./_publish_hook.ts";
import { setPublishValidated } from "./_publish.ts";

export type { PublishReceipt };

/** Options of {@linkcode EventBus}. */
export interface EventBusOptions {
  /** Named transports (at least one). */
  transports: Readonly<Record<string, Transport>>;
  /** Routing rules. */
  routes?: readonly RouteRule[];
  /** Fallback transport; defaults to the only transport when there is one. */
  defaultTransport?: string;
  /** Clock for time-outs and durations. */
  clock?: Clock;
  /** Logger for completion entries. */
  logger?: Logger;
  /** Meter for the `events.*` metrics. */
  meter?: Meter;
  /** Tracer for the publish and delivery spans (default: none, nothing is traced). */
  tracer?: Tracer;
  /** DI container for handler scopes. */
  container?: Container;
  /** Randomness for retry jitter. */
  random?: () => number;
}

/** A handler registered on the bus. */
export interface Registration {
  /** The definition. */
  readonly definition: HandlerDefinition;
  /** Name for logs and `dlq.handler`. */
  readonly name: string;
  /** Where it came from (a file and export), for error messages. */
  readonly source?: string;
}

/** A dead letter with the transport that keeps it. */
export interface StoredDeadLetter extends DeadLetter {
  /** Key of the transport in the bus. */
  readonly transport: string;
}

/** What one handler's consumer is doing now ({@linkcode EventBus.handlerLoad}). */
export interface HandlerLoad {
  /** Handler name (as in logs and `dlq.handler`). */
  readonly name: string;
  /** Topic name. */
  readonly topic: string;
  /** Subscription group. */
  readonly group: string;
  /** Key of the transport it consumes from. */
  readonly transport: string;
  /** Invocations running now. */
  readonly running: number;
  /** Deliveries admitted and waiting for a concurrency slot. */
  readonly queued: number;
}

/**
 * A transport that may also take an envelope synchronously (throwing what publish rejects), told
 * which validator produced the payload when the bus's publisher built the envelope.
 */
type MaybeSyncTransport = Transport & {
  publishNow?: (envelope: Envelope, validatedBy?: Validator<unknown>) => void;
};

/** Where the envelopes of one topic go. */
interface PublishRoute {
  readonly channel: string | undefined;
  readonly transport: MaybeSyncTransport;
  readonly counters: { ok: Counter; error: Counter };
  /** The `messaging.system` of the transport. */
  readonly system: string;
}

let instances = 0;

/** Routes publishes and runs consumers over a set of transports. */
export class EventBus {
  /** Clock. */
  readonly clock: Clock;
  /** Logger. */
  readonly logger: Logger;
  /** Meter. */
  readonly meter: Meter;
  readonly #tracer: Tracer | undefined;
  readonly #transports: Readonly<Record<string, Transport>>;
  readonly #router: TransportRouter;
  readonly #container: Container;
  readonly #random?: () => number;
  readonly #registrations: Registration[] = [];
  readonly #consumers: Consumer[] = [];
  readonly #publishCounters = new Map<string, { ok: Counter; error: Counter }>();
  readonly #routes = new Map<string, PublishRoute>();
  readonly #id = `${Date.now().toString(36)}-${(++instances).toString(36)}`;
  #started = false;

  static {
    // the publish path (`_publish.ts`, which sets the publisher's entry in `_publish_hook.ts`):
    // the publisher imports neither it nor the bus
    setPublishValidated((bus, envelope, validator) =>
      (bus as EventBus).#publishEnvelope(envelope, validator)
    );
  }

  /**
   * Creates a bus; register handlers with {@linkcode EventBus.add}, then start it.
   *
   * @param options Transports, routing and services.
   * @throws {TypeError} For an empty transport map or a bad route/default.
   */
  constructor(options: EventBusOptions) {
    const names = Object.keys(options.transports ?? {});
    if (names.length === 0) throw new TypeError('Invalid events option "transports": none given');
    const fallback = options.defaultTransport ?? (names.length === 1 ? names[0] : undefined);
    this.#transports = options.transports;
    this.#router = createTransportRouter(options.routes ?? [], names, fallback);
    this.clock = options.clock ?? systemClock;
    this.logger = options.logger ?? createLogger();
    this.meter = options.meter ?? noopMeter;
    this.#tracer = options.tracer?.enabled ? options.tracer : undefined;
    this.#container = options.container ?? new Container();
    this.#random = options.random;
  }

  /** The tracer of the publish and delivery spans; `undefined` when tracing is off. */
  get tracer(): Tracer | undefined {
    return this.#tracer;
  }

  /** The transports by name. */
  get transports(): Readonly<Record<string, Transport>> {
    return this.#transports;
  }

  /** The registered handlers. */
  get registrations(): readonly Registration[] {
    return this.#registrations;
  }

  /**
   * The transport a topic is routed to.
   *
   * @param topic Topic name.
   * @param channel Its channel.
   * @returns The transport's key.
   */
  transportName(topic: string, channel?: string): string {
    return this.#router.select(topic, channel);
  }

  /** Publish counters of one topic (created once). */
  publishCounters(topic: string): { ok: Counter; error: Counter } {
    let c = this.#publishCounters.get(topic);
    if (!c) {
      c = {
        ok: this.meter.counter(`events.publish.${topic}`, { description: "Successful publishes" }),
        error: this.meter.counter(`events.publish.${topic}.error`, {
          description: "Publish validation errors",
        }),
      };
      this.#publishCounters.set(topic, c);
    }
    return c;
  }

  /**
   * Sends an envelope to its topic's transport (the payload is already validated).
   *
   * @param envelope The envelope.
   * @throws {QueueFullError} From an in-process transport whose subscriber queue is full.
   */
  send(envelope: Envelope): Promise<void> {
    const counters = this.publishCounters(envelope.topic);
    return this.#transports[this.#router.select(envelope.topic, envelope.channel)]
      .publish(envelope)
      .then(() => counters.ok.add(1));
  }

  /**
   * Sends an envelope and resolves to the publish receipt (one promise on the hot path). A
   * transport that can take an envelope synchronously (the memory broker's `publishNow`) is
   * called without a promise of its own.
   *
   * @param envelope The envelope.
   * @param options `tx`: publish in an open transaction (transactional transports only);
   *   `deliverAt`: deliver no earlier than this time (transports with a `maxDelay` only).
   * @returns Message id and trace id.
   */
  publishEnvelope(envelope: Envelope, options?: TransportPublishOptions): Promise<PublishReceipt> {
    return this.#publishEnvelope(envelope, undefined, options);
  }

  /** `publishEnvelope()`, with the validator of the payload when the publisher built it. */
  #publishEnvelope(
    envelope: Envelope,
    validatedBy: Validator<unknown> | undefined,
    options?: TransportPublishOptions,
  ): Promise<PublishReceipt> {
    let route = this.#routes.get(envelope.topic);
    if (route === undefined || route.channel !== envelope.channel) route = this.#route(envelope);
    if (this.#tracer === undefined) return this.#publish(route, envelope, options, validatedBy);
    const span = startPublishSpan(this.#tracer, route.system, envelope);
    return endWith(span, this.#publish(route, envelope, options, validatedBy));
  }

  /** Publishes on the topic's route. */
  #publish(
    route: PublishRoute,
    envelope: Envelope,
    options: TransportPublishOptions | undefined,
    validatedBy: Validator<unknown> | undefined,
  ): Promise<PublishReceipt> {
    const { transport, counters } = route;
    if (options !== undefined) return this.#publishWith(route, envelope, options);
    if (transport.publishNow !== undefined) {
      try {
        transport.publishNow(envelope, validatedBy);
      } catch (err) {
        return Promise.reject(err);
      }
      counters.ok.add(1);
      return Promise.resolve({ messageId: envelope.id, traceId: envelope.traceId });
    }
    return transport.publish(envelope).then(() => {
      counters.ok.add(1);
      return { messageId: envelope.id, traceId: envelope.traceId };
    });
  }

  /**
   * Publishes with transport options: only transactional transports take a `tx`, only those with
   * a `maxDelay` a `deliverAt`.
   */
  #publishWith(
    { transport, counters }: PublishRoute,
    envelope: Envelope,
    options: TransportPublishOptions,
  ): Promise<PublishReceipt> {
    if (options.tx !== undefined && !transport.capabilities.transactional) {
      const name = this.#router.select(envelope.topic, envelope.channel);
      return Promise.reject(
        new TypeError(
          `Invalid publish option "tx" for topic "${envelope.topic}": transport "${name}" cannot publish in a transaction`,
        ),
      );
    }
    if (options.deliverAt !== undefined) {
      // what the publisher checked already, for callers of publishEnvelope (the Event Server)
      try {
        checkMaxDelay(
          envelope.topic,
          { deliverAt: options.deliverAt, option: "deliverAt" },
          this.clock.now(),
          this.#router.select(envelope.topic, envelope.channel),
          transport.capabilities,
        );
      } catch (err) {
        return Promise.reject(err);
      }
    }
    return transport.publish(envelope, options).then(() => {
      counters.ok.add(1);
      return { messageId: envelope.id, traceId: envelope.traceId };
    });
  }

  /** Resolves and remembers the transport and counters of a topic (and channel). */
  #route(envelope: Envelope): PublishRoute {
    const transport = this.#transports[this.#router.select(envelope.topic, envelope.channel)];
    const route: PublishRoute = {
      channel: envelope.channel,
      transport,
      counters: this.publishCounters(envelope.topic),
      system: messagingSystem(transport),
    };
    this.#routes.set(envelope.topic, route);
    return route;
  }

  /**
   * Registers a handler; it subscribes on {@linkcode EventBus.start} (or now, when started).
   *
   * @param definition The handler.
   * @param name Name for logs and dead letters (default: group, else topic).
   * @param source File and export, for error messages.
   * @throws {Error} When an external transport gets a handler with no `group`.
   */
  async add(definition: HandlerDefinition, name?: string, source?: string): Promise<void> {
    const { name: handlerName, group } = handlerIdentity(definition, name);
    const tName = this.#router.select(definition.topic.name, definition.topic.channel);
    const transport = this.#transports[tName];
    if (transport.capabilities.external && !definition.options.group) {
      throw new Error(
        `Handler ${
          source ?? `"${handlerName}"`
        } for topic "${definition.topic.name}" needs a stable "group" option: transport "${tName}" is external`,
      );
    }
    const reg: Registration = { definition, name: handlerName, ...(source ? { source } : {}) };
    this.#registrations.push(reg);
    const consumer = new Consumer({
      definition,
      transport,
      group,
      instanceId: `${this.#id}-${this.#consumers.length}`,
      handlerName,
      deadLetter: (env) => this.deadLetter(env),
      clock: this.clock,
      logger: this.logger,
      meter: this.meter,
      ...(this.#tracer !== undefined
        ? { tracer: this.#tracer, system: messagingSystem(transport) }
        : {}),
      ...(source !== undefined ? { source } : {}),
      container: this.#container,
      ...(this.#random ? { random: this.#random } : {}),
    });
    this.#consumers.push(consumer);
    if (this.#started) await consumer.start();
  }

  /**
   * Dead-letters an envelope addressed to `<topic>.dlq` on the transport that topic routes to.
   *
   * @param envelope The dead-letter envelope.
   */
  deadLetter(envelope: Envelope): Promise<void> {
    const name = this.#router.select(envelope.topic, envelope.channel);
    return this.#transports[name].deadLetter(envelope);
  }

  /** Subscribes every registered handler. */
  async start(): Promise<void> {
    if (this.#started) return;
    this.#started = true;
    for (const c of this.#consumers) await c.start();
  }

  /**
   * Stops consuming and drains admitted work, then closes the transports.
   *
   * @param options `closeTransports: false` keeps transports open (shared ones).
   */
  async stop(options: { closeTransports?: boolean } = {}): Promise<void> {
    await Promise.all(this.#consumers.map((c) => c.stop()));
    this.#started = false;
    if (options.closeTransports !== false) {
      await Promise.all(Object.values(this.#transports).map((t) => t.close()));
    }
  }

  /**
   * Dead letters kept by every transport, oldest first per transport.
   *
   * @param options Restrict to one original or `.dlq` topic.
   * @returns The dead letters.
   */
  async deadLetters(options: { topic?: string } = {}): Promise<StoredDeadLetter[]> {
    const out: StoredDeadLetter[] = [];
    for (const [name, t] of Object.entries(this.#transports)) {
      for (const d of await t.deadLetters.list(options)) out.push({ ...d, transport: name });
    }
    return out;
  }

  /**
   * Publishes kept dead letters again on their original topic, with the `dlq.*` attributes
   * removed and a fresh attempt count.
   *
   * @param ids Envelope ids to redrive; all kept dead letters when omitted.
   * @returns How many were redriven.
   */
  async redrive(ids?: readonly string[]): Promise<number> {
    let n = 0;
    for (const t of Object.values(this.#transports)) {
      const want = ids ?? (await t.deadLetters.list()).map((d) => d.envelope.id);
      for (const d of await t.deadLetters.take(want)) {
        const attributes: Record<string, string> = {};
        for (const [k, v] of Object.entries(d.envelope.attributes)) {
          if (!k.startsWith("dlq.")) attributes[k] = v;
        }
        const original = d.envelope.attributes["dlq.original_topic"] ??
          d.envelope.topic.replace(/\.dlq$/, "");
        // A redrive is a deliberate repeat: drop the dedupe key so the window does not swallow it.
        const { dedupeKey: _dedupe, ...envelope } = d.envelope;
        await this.send({
          ...envelope,
          topic: original,
          attributes,
          publishedAt: this.clock.now(),
        });
        n++;
      }
    }
    return n;
  }

  /**
   * What each handler's consumer is doing now, in registration order (for dashboards).
   *
   * @returns One entry per registered handler.
   */
  handlerLoad(): HandlerLoad[] {
    return this.#consumers.map((c, i) => {
      const r = this.#registrations[i];
      const t = r.definition.topic;
      return {
        name: r.name,
        topic: t.name,
        group: r.definition.options.group ?? r.name,
        transport: this.transportName(t.name, t.channel),
        running: c.running,
        queued: c.queued,
      };
    });
  }
}
