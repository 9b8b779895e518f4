/**
 * `POST <base>/publish`: one message from an HTTP client. Checks in order: media type, size,
 * JSON, the `publish-request` schema, the topic, access, the topic version and the payload;
 * then the idempotency window (same id and bytes: the first answer again; same id, other bytes:
 * conflict); then the message goes to the app's event bus when it has handlers for the topic
 * and to the realtime broker. The trace id comes from `traceparent` (through the request's
 * context) and travels in the envelope into handler contexts. Internal.
 *
 * @module
 */

import { type AuthUser, formatTraceparent, parseTraceparent, tryContext } from "@fw/runtime";
import { type Envelope, newTraceId } from "../envelope.ts";
import type { PublishRequest, PublishResponse } from "../protocol/frames.ts";
import { validateProtocolValue } from "../protocol/schemas.ts";
import { QueueFullError } from "../transport.ts";
import type { ServerCore } from "./_core.ts";
import { httpError, json } from "./_http.ts";
import { digestOf, type IdempotencyWindow } from "./_idempotency.ts";
import { EVENT_SERVER_MAX_DELAY_MS } from "./_delayed.ts";

const TRACEPARENT = /^[0-9a-f]{2}-([0-9a-f]{32})-[0-9a-f]{16}-[0-9a-f]{2}$/;
const AUTH_CLAIMS = ["sub", "email", "azp", "client_id"] as const;

/**
 * The W3C trace context of the request, for the envelope: the caller's `traceparent` (and
 * `tracestate`) when valid and of the same trace, so handlers continue the publisher's trace
 * and honour its sampling decision. With tracing on in this app, the publish span replaces it.
 */
function traceContextOf(
  req: Request,
  traceId: string,
): Pick<Envelope, "traceparent" | "tracestate"> {
  const headers = req.headers;
  const sc = parseTraceparent(headers.get("traceparent"), headers.get("tracestate"));
  if (sc === undefined || sc.traceId !== traceId) return {};
  const traceparent = formatTraceparent(sc);
  return sc.traceState ? { traceparent, tracestate: sc.traceState } : { traceparent };
}

/** The trace id of the request: the context's (set from `traceparent`), else the header's. */
function traceIdOf(req: Request, ctx: { traceId?: unknown } | undefined): string {
  const header = TRACEPARENT.exec(req.headers.get("traceparent")?.trim().toLowerCase() ?? "");
  if (header && !/^0+$/.test(header[1])) return header[1];
  return typeof ctx?.traceId === "string" && ctx.traceId ? ctx.traceId : newTraceId();
}

async function readBody(req: Request, limit: number): Promise<Uint8Array | undefined> {
  const declared = Number(req.headers.get("content-length") ?? "0");
  if (declared > limit) return undefined;
  const bytes = new Uint8Array(await req.arrayBuffer());
  return bytes.length > limit ? undefined : bytes;
}

/**
 * The due time of a request: `undefined` for now (none, or already past), else the time, or why
 * it cannot be held (too far ahead for the server, or for the transport of the topic's handlers).
 */
function dueTime(
  core: ServerCore,
  topic: { name: string; channel?: string },
  request: PublishRequest,
): number | string | undefined {
  const at = request.deliverAt;
  const now = core.clock.now();
  if (at === undefined || at <= now) return undefined;
  const bus = core.handlersBus();
  const handled = bus?.registrations.some((r) => r.definition.topic.name === topic.name);
  const handlers = handled
    ? bus!.transports[bus!.transportName(topic.name, topic.channel)]
    : undefined;
  const max = Math.min(EVENT_SERVER_MAX_DELAY_MS, handlers?.capabilities.maxDelay ?? Infinity);
  if (handlers !== undefined && handlers.capabilities.maxDelay === undefined) {
    return `body.deliverAt cannot be honoured: the transport of topic "${topic.name}" cannot delay messages`;
  }
  return at - now > max ? `body.deliverAt must be at most ${max} ms ahead` : at;
}

/**
 * Handles one publish request.
 *
 * @param core The server's shared state.
 * @param window The idempotency window.
 * @param req The request.
 * @returns The answer.
 */
export async function publish(
  core: ServerCore,
  window: IdempotencyWindow,
  req: Request,
): Promise<Response> {
  const type = req.headers.get("content-type") ?? "";
  if (!/^application\/([\w.+-]+\+)?json\b/i.test(type)) {
    return httpError(
      "unsupported_media_type",
      'Publish bodies are JSON: send "Content-Type: application/json"',
    );
  }
  const bytes = await readBody(req, core.limits.maxPublishBytes);
  if (bytes === undefined) {
    return httpError(
      "too_large",
      `Publish body is larger than ${core.limits.maxPublishBytes} bytes`,
    );
  }
  let body: unknown;
  try {
    body = JSON.parse(new TextDecoder().decode(bytes));
  } catch {
    return httpError("invalid_request", "Publish body is not valid JSON", {
      errors: [{ field: "body", message: "must be valid JSON" }],
    });
  }
  const issues = validateProtocolValue("publish-request", body);
  const named = typeof (body as { id?: unknown })?.id === "string"
    ? { id: (body as { id: string }).id.slice(0, 128) }
    : {};
  if (issues.length > 0) {
    const errors = issues.map((i) => {
      const field = i.field === "value" ? "body" : `body.${i.field}`;
      return { field, message: `${field} ${i.message}` };
    });
    return httpError(
      "invalid_request",
      `Invalid publish request: ${errors.map((e) => e.message).join("; ")}`,
      { ...named, errors },
    );
  }
  const request = body as PublishRequest;
  const topic = core.topics.get(request.topic);
  if (topic === undefined) {
    return httpError("unknown_topic", `Unknown topic "${request.topic}"`, named);
  }
  const ctx = tryContext<{ traceId?: string; user?: AuthUser }>();
  const user = ctx?.user;
  const access = await core.authorize(user, topic.name, "publish");
  if (access !== "ok") {
    return httpError(
      access,
      access === "unauthorized"
        ? `Publishing to topic "${topic.name}" needs an authenticated user`
        : `Not allowed to publish to topic "${topic.name}"`,
      named,
    );
  }
  if (
    request.version !== undefined && topic.version !== undefined &&
    request.version !== topic.version
  ) {
    return httpError(
      "invalid_request",
      `Topic "${topic.name}" is version "${topic.version}", the request names "${request.version}"`,
      named,
    );
  }
  const due = dueTime(core, topic, request);
  if (typeof due === "string") {
    return httpError("invalid_request", due, {
      ...named,
      errors: [{ field: "body.deliverAt", message: due }],
    });
  }
  const checked = topic.validate(request.payload);
  if (!checked.ok) {
    return httpError(
      "invalid_payload",
      `Invalid payload for topic "${topic.name}": ${
        checked.errors.map((e) => e.message).join("; ")
      }`,
      { ...named, errors: checked.errors },
    );
  }
  if (core.stopping) {
    return httpError("unavailable", "The server is stopping", { ...named, retryAfterMs: 1000 });
  }
  const digest = await digestOf(bytes);
  const seen = window.claim(request.id, digest);
  if (seen.state === "conflict") {
    return httpError(
      "conflict",
      `Message id "${request.id}" was already published with a different body`,
      named,
    );
  }
  if (seen.state === "in_progress") {
    return httpError("in_progress", `Message id "${request.id}" is being published`, {
      ...named,
      retryAfterMs: 100,
    });
  }
  if (seen.state === "done") return json(200, { ...seen.response, duplicate: true });

  const attributes: Record<string, string> = {};
  for (const [k, v] of Object.entries(request.attributes ?? {})) {
    if (!k.startsWith("auth.")) attributes[k] = v;
  }
  for (const claim of AUTH_CLAIMS) {
    const v = user?.[claim];
    if (typeof v === "string" && v) attributes[`auth.${claim}`] = v;
  }
  const traceId = traceIdOf(req, ctx);
  const bus = core.handlersBus();
  const handled = bus?.registrations.some((r) => r.definition.topic.name === topic.name) ?? false;
  let handedOff = false;
  try {
    if (bus !== undefined && handled) {
      const envelope: Envelope = {
        id: request.id,
        topic: topic.name,
        payload: checked.value,
        attributes,
        traceId,
        publishedAt: core.clock.now(),
        ...traceContextOf(req, traceId),
        ...(request.key !== undefined ? { key: request.key } : {}),
        ...(topic.channel !== undefined ? { channel: topic.channel } : {}),
        ...(topic.version !== undefined ? { version: topic.version } : {}),
      };
      await bus.publishEnvelope(envelope, due === undefined ? undefined : { deliverAt: due });
      handedOff = true;
    }
    const base = { outcome: "accepted", id: request.id, topic: topic.name } as const;
    let response: PublishResponse;
    if (due !== undefined) {
      core.delayed.hold(due, topic.name, checked.value, request.id);
      response = { ...base, traceId, duplicate: false, deliverAt: due };
    } else {
      const message = await core.realtime.publish(topic.name, checked.value);
      response = { ...base, streamId: message.id, traceId, duplicate: false };
    }
    window.complete(request.id, response);
    return json(200, response);
  } catch (error) {
    window.release(request.id);
    if (error instanceof QueueFullError && !handedOff) {
      return httpError("unavailable", `Topic "${topic.name}" is busy: its handler queue is full`, {
        ...named,
        retryAfterMs: 1000,
      });
    }
    core.logger.error("eventServer(): publish failed", {
      topic: topic.name,
      messageId: request.id,
      error: error as Error,
    });
    return httpError(
      "internal",
      "Publishing failed part-way: the message may have been published; retry with the same id and body",
      named,
    );
  }
}
