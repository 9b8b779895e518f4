/**
 * Reading an Event Server's discovery document from a browser, phone or Deno: the
 * `isCompatibleEventServer()` check and the strict `readDiscovery()` the client uses.
 *
 * @module
 */

import { DISCOVERY_PATH, type DiscoveryDocument, EVENTS_PROTOCOL } from "../protocol/frames.ts";
import { EventClientError } from "./errors.ts";

/**
 * The discovery URL of the server behind `url` (`ws:`/`wss:`/`http:`/`https:`, any path).
 *
 * @param url The server's WebSocket or HTTP URL.
 * @returns `http(s)://host/.well-known/fw/events`.
 * @throws {TypeError} For a URL that is not ws, wss, http or https.
 */
export function discoveryUrl(url: string | URL): string {
  const u = new URL(url);
  const scheme = { "ws:": "http:", "wss:": "https:", "http:": "http:", "https:": "https:" }[
    u.protocol
  ];
  if (!scheme) {
    throw new TypeError(
      `Invalid Event Server URL "${u.href}": expected ws:, wss:, http: or https:`,
    );
  }
  return `${scheme}//${u.host}${DISCOVERY_PATH}`;
}

/**
 * Fetches and checks the discovery document of the server behind `url`.
 *
 * @param url The server's WebSocket or HTTP URL.
 * @param fetchFn The fetch to use (default the global one).
 * @returns The document.
 * @throws {EventClientError} `incompatible_server` when the answer is not an fw Event Server's
 *   discovery document; `connection_lost` for an answer that says "try again" (408, 429 or any
 *   5xx, such as a load balancer's 503 while every instance restarts); a `TypeError` from fetch
 *   when the server cannot be reached.
 */
export async function readDiscovery(
  url: string | URL,
  fetchFn: typeof fetch = fetch,
): Promise<DiscoveryDocument> {
  const where = discoveryUrl(url);
  const res = await fetchFn(where, { headers: { accept: "application/json" } });
  const text = await res.text();
  if (res.status >= 500 || res.status === 408 || res.status === 429) {
    throw new EventClientError(
      "connection_lost",
      `The Event Server at "${where}" is unavailable for now: status ${res.status}`,
    );
  }
  let doc: Partial<DiscoveryDocument> | undefined;
  try {
    doc = JSON.parse(text);
  } catch {
    doc = undefined;
  }
  if (!res.ok || typeof doc !== "object" || doc === null || doc.protocol !== EVENTS_PROTOCOL) {
    const got = !res.ok
      ? `status ${res.status}`
      : typeof doc === "object" && doc !== null
      ? `protocol "${String(doc.protocol)}"`
      : "a body that is not JSON";
    throw new EventClientError(
      "incompatible_server",
      `Not an fw Event Server at "${where}": expected a discovery document with protocol "${EVENTS_PROTOCOL}", got ${got}`,
    );
  }
  if (!doc.profiles?.includes("websocket") || typeof doc.endpoints?.websocket !== "string") {
    throw new EventClientError(
      "incompatible_server",
      `Not a usable fw Event Server at "${where}": it does not offer the "websocket" profile`,
    );
  }
  return doc as DiscoveryDocument;
}

/**
 * True when the server behind `url` answers an fw Event Server discovery document
 * (`fw.events.v1` with the WebSocket profile). Never throws: an unreachable server is `false`.
 *
 * @param url The server's WebSocket or HTTP URL (`wss://events.example/events/ws`).
 * @param fetchFn The fetch to use (default the global one).
 * @returns Whether `eventClient()` can use it.
 *
 * @example
 * ```ts ignore
 * import { isCompatibleEventServer } from "@fw/events/client";
 * if (!(await isCompatibleEventServer("wss://events.example/events/ws"))) {
 *   console.warn("no live updates");
 * }
 * ```
 */
export async function isCompatibleEventServer(
  url: string | URL,
  fetchFn: typeof fetch = fetch,
): Promise<boolean> {
  try {
    await readDiscovery(url, fetchFn);
    return true;
  } catch {
    return false;
  }
}
