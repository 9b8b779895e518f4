/**
 * `eventServerTransport({ origin, audience, contractVersion, tokenSource })`: the managed
 * transport. It publishes through an fw Event Server's `POST /events/publish`, retrying
 * byte-identical requests (same body, same message id) so the server accepts each message once,
 * with the W3C `traceparent` of the message and a token from the application's `tokenSource`.
 * It is publish-only: the Event Server delivers to WebSocket and SSE clients, not to handlers of
 * remote services, so a handler routed to it fails at start-up.
 *
 * @module
 */

import type { DiscoveryDocument } from "../../protocol/frames.ts";
import { DISCOVERY_PATH, EVENTS_PROTOCOL } from "../../protocol/frames.ts";
import type { Envelope } from "../../envelope.ts";
import type {
  DeadLetterStore,
  DeliveryListener,
  Subscription,
  SubscriptionSpec,
  Transport,
  TransportCapabilities,
  TransportPublishOptions,
} from "../../transport.ts";
import { EventServerPublishError, outcomeOf } from "./errors.ts";
import { EVENT_SERVER_MAX_DELAY_MS } from "../../server/_delayed.ts";

/** Options of {@linkcode eventServerTransport}. */
export interface EventServerTransportOptions {
  /** The Event Server's origin (`https://events.example`). */
  origin: string;
  /** The audience the token is for; passed to `tokenSource`. */
  audience: string;
  /**
   * The contract version this service publishes: every topic must declare it
   * (`topic(name, schema, { version })`), and the server's topics must serve it.
   */
  contractVersion: string;
  /**
   * Returns the token for `audience` (the bare token or the full `Bearer ...` value); called for
   * every request so that it may refresh. Omit it for a server that needs none.
   */
  tokenSource?: (audience: string) => Promise<string> | string;
  /** Requests per publish, first included (default 4). */
  maxAttempts?: number;
  /** First retry delay ceiling in ms; full jitter, doubling up to `maxDelayMs` (default 100). */
  initialDelayMs?: number;
  /** Largest retry delay in ms (default 5,000; also caps the server's `retryAfterMs`). */
  maxDelayMs?: number;
  /** Time-out of one request in ms (default 10,000); a time-out is `ambiguous`. */
  timeoutMs?: number;
  /** fetch to use (default the global one). */
  fetch?: typeof fetch;
  /** Waits between attempts (default a timer; tests pass their own). */
  sleep?: (ms: number) => Promise<void>;
  /** Random source in [0, 1) for the jitter (default `Math.random`). */
  random?: () => number;
}

/** The managed transport, with its start-up check. */
export interface EventServerTransport extends Transport {
  /** The publish URL, once {@linkcode EventServerTransport.ready} ran. */
  readonly publishUrl: string | undefined;
  /**
   * Reads the discovery document and checks the protocol, the publish profile and the contract
   * version (the events plugin calls it at start-up).
   *
   * @throws {Error} When the server is not an fw Event Server or serves another contract version.
   */
  ready(): Promise<void>;
}

const NO_DEAD_LETTERS: DeadLetterStore = {
  list: () => Promise.resolve([]),
  take: () => Promise.resolve([]),
};

function fail(detail: string): never {
  throw new TypeError(`Invalid eventServerTransport() option ${detail}`);
}

function hex(bytes: number): string {
  const b = crypto.getRandomValues(new Uint8Array(bytes));
  return Array.from(b, (x) => x.toString(16).padStart(2, "0")).join("");
}

/** The request body of an envelope; computed once so every retry sends the same bytes. */
function bodyOf(e: Envelope, deliverAt?: number): string {
  const attributes: Record<string, string> = {};
  for (const [k, v] of Object.entries(e.attributes)) if (!k.startsWith("auth.")) attributes[k] = v;
  return JSON.stringify({
    id: e.id,
    topic: e.topic,
    payload: e.payload,
    ...(Object.keys(attributes).length ? { attributes } : {}),
    ...(e.key !== undefined ? { key: e.key } : {}),
    version: e.version,
    ...(deliverAt !== undefined ? { deliverAt: Math.ceil(deliverAt) } : {}),
  });
}

/**
 * Creates the managed transport. Pass it as `events({ transport })`, or let
 * `events({ transport: "eventserver", eventServer: {...} })` create it.
 *
 * Outcomes: `200` accepted; a body with `outcome` is trusted; otherwise 5xx, network errors and
 * time-outs are `ambiguous`, other statuses `permanent`. `retryable` and `ambiguous` failures are
 * retried with the same bytes up to `maxAttempts`; what remains is thrown as an
 * {@linkcode EventServerPublishError} carrying its `outcome`.
 *
 * @param options Origin, audience, contract version, token source and retry bounds.
 * @returns The transport.
 * @throws {TypeError} At once, for invalid options (named).
 *
 * @example
 * ```ts ignore
 * import { application } from "@fw/application";
 * import { events, eventServerTransport } from "@fw/events";
 * await application().use(events({
 *   transport: eventServerTransport({
 *     origin: "https://events.example",
 *     audience: "events",
 *     contractVersion: "1",
 *     tokenSource: (audience) => identity.token(audience),
 *   }),
 * })).start();
 * ```
 */
export function eventServerTransport(options: EventServerTransportOptions): EventServerTransport {
  if (typeof options !== "object" || options === null) fail("object: expected an object");
  let origin: string;
  try {
    const u = new URL(options.origin);
    if (u.protocol !== "http:" && u.protocol !== "https:") throw new Error();
    origin = u.origin;
  } catch {
    fail(
      `"origin": expected an http(s) origin such as "https://events.example", got "${
        String(options.origin)
      }"`,
    );
  }
  for (const k of ["audience", "contractVersion"] as const) {
    if (typeof options[k] !== "string" || !options[k]) fail(`"${k}": expected a non-empty string`);
  }
  if (options.tokenSource !== undefined && typeof options.tokenSource !== "function") {
    fail('"tokenSource": expected a function (audience) => Promise<token>');
  }
  const num = (v: number | undefined, name: string, fallback: number): number => {
    if (v === undefined) return fallback;
    if (!Number.isInteger(v) || v < 1) fail(`"${name}": expected an integer >= 1, got "${v}"`);
    return v;
  };
  const maxAttempts = num(options.maxAttempts, "maxAttempts", 4);
  const initial = num(options.initialDelayMs, "initialDelayMs", 100);
  const maxDelay = num(options.maxDelayMs, "maxDelayMs", 5_000);
  const timeoutMs = num(options.timeoutMs, "timeoutMs", 10_000);
  const doFetch = options.fetch ?? fetch;
  const sleep = options.sleep ?? ((ms: number) => new Promise<void>((r) => setTimeout(r, ms)));
  const random = options.random ?? Math.random;
  const contract = options.contractVersion;
  let publishUrl: string | undefined;
  let delays = false;
  let readying: Promise<void> | undefined;

  async function check(): Promise<void> {
    const where = `${origin}${DISCOVERY_PATH}`;
    let doc: DiscoveryDocument | undefined;
    try {
      const res = await doFetch(where, { signal: AbortSignal.timeout(timeoutMs) });
      doc = res.ok ? await res.json() : (await res.body?.cancel(), undefined);
    } catch (error) {
      throw new Error(`Cannot reach the Event Server at "${where}": ${(error as Error).message}`);
    }
    if (doc?.protocol !== EVENTS_PROTOCOL || typeof doc.endpoints?.publish !== "string") {
      throw new Error(
        `Not an fw Event Server with HTTP publish at "${where}": expected protocol "${EVENTS_PROTOCOL}" and a "publish" endpoint`,
      );
    }
    const other = doc.topics?.find((t) => t.version !== undefined && t.version !== contract);
    if (other) {
      throw new Error(
        `Contract version mismatch with the Event Server at "${origin}": topic "${other.name}" is version "${other.version}", the transport is bound to "${contract}"`,
      );
    }
    publishUrl = `${origin}${doc.endpoints.publish}`;
    delays = doc.features?.delayedPublish === true;
  }

  function ready(): Promise<void> {
    readying ??= check().catch((error) => {
      readying = undefined;
      throw error;
    });
    return readying;
  }

  async function publish(
    envelope: Envelope,
    publishOptions?: TransportPublishOptions,
  ): Promise<void> {
    if (typeof envelope.version !== "string" || !envelope.version) {
      throw new TypeError(
        `Cannot publish topic "${envelope.topic}" through the Event Server: managed topics need a version (topic("${envelope.topic}", schema, { version: "${contract}" }))`,
      );
    }
    if (envelope.version !== contract) {
      throw new EventServerPublishError(
        "permanent",
        `Cannot publish topic "${envelope.topic}" version "${envelope.version}": the transport is bound to contract version "${contract}"`,
        { code: "invalid_request", messageId: envelope.id, attempts: 0 },
      );
    }
    await ready();
    const at = publishOptions?.deliverAt;
    if (at !== undefined && !delays) {
      throw new TypeError(
        `Invalid publish option "deliverAt" for topic "${envelope.topic}": the Event Server at "${origin}" does not delay publishes`,
      );
    }
    const body = bodyOf(envelope, at);
    // The publish span's context when tracing is on (the server's handlers continue it), else
    // the message's trace id under a fresh parent id.
    const traceparent = envelope.traceparent ?? `00-${envelope.traceId}-${hex(8)}-01`;
    let last: EventServerPublishError | undefined;
    for (let attempt = 1; attempt <= maxAttempts; attempt++) {
      let retryAfter: number | undefined;
      try {
        const headers: Record<string, string> = { "content-type": "application/json", traceparent };
        if (envelope.tracestate) headers.tracestate = envelope.tracestate;
        if (options.tokenSource) {
          const token = await options.tokenSource(options.audience);
          headers.authorization = /^bearer /i.test(token) ? token : `Bearer ${token}`;
        }
        const res = await doFetch(publishUrl!, {
          method: "POST",
          headers,
          body,
          signal: AbortSignal.timeout(timeoutMs),
        });
        const text = await res.text();
        if (res.ok) return;
        let answer: { code?: string; message?: string; retryAfterMs?: number } | undefined;
        try {
          answer = JSON.parse(text);
        } catch { /* not JSON: judged by status */ }
        const outcome = outcomeOf(res.status, answer);
        retryAfter = typeof answer?.retryAfterMs === "number" ? answer.retryAfterMs : undefined;
        last = new EventServerPublishError(
          outcome,
          `Publish of message "${envelope.id}" to topic "${envelope.topic}" failed (${outcome}): ${res.status} ${
            answer?.code ?? ""
          } ${answer?.message ?? text.slice(0, 200)}`.trim(),
          {
            status: res.status,
            code: answer?.code ?? `http_${res.status}`,
            messageId: envelope.id,
            attempts: attempt,
          },
        );
        if (outcome === "permanent") throw last;
      } catch (error) {
        if (error instanceof EventServerPublishError) throw error;
        const timeout = (error as Error)?.name === "TimeoutError";
        last = new EventServerPublishError(
          "ambiguous",
          `Publish of message "${envelope.id}" to topic "${envelope.topic}" got no answer (ambiguous): ${
            (error as Error)?.message ?? String(error)
          }`,
          { code: timeout ? "timeout" : "network", messageId: envelope.id, attempts: attempt },
        );
      }
      if (attempt < maxAttempts) {
        const ceiling = Math.min(maxDelay, initial * 2 ** (attempt - 1));
        await sleep(
          retryAfter !== undefined
            ? Math.min(retryAfter, maxDelay)
            : Math.floor(random() * ceiling),
        );
      }
    }
    throw last!;
  }

  const capabilities: TransportCapabilities = {
    ordering: false,
    persistent: true,
    external: true,
    admission: false,
    // The server holds a delayed message (its handlers' transport may allow less: it says so).
    maxDelay: EVENT_SERVER_MAX_DELAY_MS,
  };
  return {
    name: "eventserver",
    capabilities,
    get publishUrl() {
      return publishUrl;
    },
    ready,
    publish,
    subscribe(spec: SubscriptionSpec, _listener: DeliveryListener): Promise<Subscription> {
      return Promise.reject(
        new Error(
          `Cannot subscribe handler "${spec.group}" to topic "${spec.topic}": the eventserver transport is publish-only (the Event Server delivers to WebSocket and SSE clients, not to handlers of other services); route the topic to another transport`,
        ),
      );
    },
    deadLetter(envelope: Envelope): Promise<void> {
      return Promise.reject(
        new Error(
          `Cannot dead-letter message "${envelope.id}": the eventserver transport is publish-only`,
        ),
      );
    },
    deadLetters: NO_DEAD_LETTERS,
    close: () => Promise.resolve(),
  };
}
