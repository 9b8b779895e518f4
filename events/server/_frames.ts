/**
 * Encoding of outgoing events, once per message rather than once per subscriber: a fan-out to
 * many connections reuses the text (WebSocket) or bytes (SSE) of the last message. Internal.
 *
 * @module
 */

import type { RealtimeMessage } from "../realtime/realtime.ts";

let lastMessage: RealtimeMessage | undefined;
let lastChannel: string | undefined;
let lastTail = "";

/**
 * The end of an `event` frame after its `sub`: `"topic":..,"channel":..,"id":..,"payload":..}`.
 *
 * @param message The realtime message.
 * @param channel The topic's channel, if any.
 * @returns The text.
 */
export function eventTail(message: RealtimeMessage, channel: string | undefined): string {
  if (message === lastMessage && channel === lastChannel) return lastTail;
  lastMessage = message;
  lastChannel = channel;
  lastTail = `"topic":${JSON.stringify(message.topic)},` +
    (channel !== undefined ? `"channel":${JSON.stringify(channel)},` : "") +
    `"id":${JSON.stringify(message.id)},"payload":${JSON.stringify(message.payload ?? null)}}`;
  return lastTail;
}

const encoder = new TextEncoder();
let sseMessage: RealtimeMessage | undefined;
let sseChannel: string | undefined;
let sseBytes = new Uint8Array();

/**
 * One SSE message event: `id: <stream id>` and `data:` the `sse-event` JSON.
 *
 * @param message The realtime message.
 * @param channel The topic's channel, if any.
 * @returns The encoded event.
 */
export function sseEventBytes(message: RealtimeMessage, channel: string | undefined): Uint8Array {
  if (message === sseMessage && channel === sseChannel) return sseBytes;
  sseMessage = message;
  sseChannel = channel;
  // Stream ids never contain line breaks (the schema caps them); JSON text never does.
  const id = message.id.replace(/[\r\n\0]/g, "");
  sseBytes = encoder.encode(`id: ${id}\ndata: {${eventTail(message, channel)}\n\n`);
  return sseBytes;
}

/**
 * A named SSE event without an id (`subscribed`, `gap`, `error`).
 *
 * @param event The event name.
 * @param data The data, serialised as JSON.
 * @returns The encoded event.
 */
export function sseNamed(event: string, data: unknown): Uint8Array {
  return encoder.encode(`event: ${event}\ndata: ${JSON.stringify(data)}\n\n`);
}
