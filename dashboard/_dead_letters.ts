/**
 * The dashboard's view of dead letters across every transport of the bus: a stable order
 * (time of death, transport, id), cursor pagination, a topic filter, and redrive or discard by
 * ids or by topic. Internal.
 *
 * @module
 */

import type { EventBus, StoredDeadLetter } from "@fw/events";
import { redact } from "./_redact.ts";

/** One dead letter as the JSON API shows it. */
export interface DeadLetterItem {
  /** The message id. */
  readonly id: string;
  /** The original topic. */
  readonly topic: string;
  /** Key of the transport that keeps it. */
  readonly transport: string;
  /** Attempts made before it was dead-lettered. */
  readonly attempts: number;
  /** The last error. */
  readonly error: string;
  /** The handler that gave up, when known. */
  readonly handler?: string;
  /** When it was dead-lettered (ISO 8601). */
  readonly deadAt: string;
  /** When it was first published (ISO 8601). */
  readonly publishedAt: string;
  /** The payload. */
  readonly payload: unknown;
  /** Attributes, without `auth.*`, credentials and the `dlq.*` bookkeeping. */
  readonly attributes: Record<string, string>;
}

/** A page of dead letters. */
export interface DeadLetterPage {
  /** The items, oldest first. */
  readonly items: DeadLetterItem[];
  /** Cursor of the next page, or `null` after the last. */
  readonly next: string | null;
  /** How many match the filter in all. */
  readonly total: number;
}

/** Count of dead letters per original topic. */
export interface DeadLetterSummary {
  /** All kept dead letters. */
  readonly total: number;
  /** By original topic. */
  readonly byTopic: Record<string, number>;
}

function originalTopic(d: StoredDeadLetter): string {
  return d.envelope.attributes["dlq.original_topic"] ?? d.envelope.topic.replace(/\.dlq$/, "");
}

/** Time of death, then transport; a stable sort keeps each store's own order within those. */
function order(a: StoredDeadLetter, b: StoredDeadLetter): number {
  return a.deadAt - b.deadAt || a.transport.localeCompare(b.transport);
}

type Key = [number, string, string];

function keyOf(d: StoredDeadLetter): Key {
  return [d.deadAt, d.transport, d.envelope.id];
}

/**
 * The items after the cursor: after the cursor's own item when it is still kept, else those not
 * older than it (one with the same time and transport may then be shown twice, never skipped).
 */
function rest(all: StoredDeadLetter[], k: Key): StoredDeadLetter[] {
  const at = all.findIndex((d) => d.envelope.id === k[2] && d.transport === k[1]);
  if (at >= 0) return all.slice(at + 1);
  return all.filter((d) =>
    d.deadAt > k[0] || (d.deadAt === k[0] && d.transport.localeCompare(k[1]) >= 0)
  );
}

/**
 * Encodes the position after an item.
 *
 * @param d The last item of a page.
 * @returns An opaque cursor.
 */
function encodeCursor(d: StoredDeadLetter): string {
  return btoa(JSON.stringify(keyOf(d))).replace(/=+$/, "");
}

/**
 * Reads a cursor.
 *
 * @param cursor What `next` was.
 * @returns The position.
 * @throws {RangeError} For a cursor this module did not make.
 */
export function decodeCursor(cursor: string): Key {
  try {
    const k = JSON.parse(atob(cursor));
    if (
      Array.isArray(k) && k.length === 3 && typeof k[0] === "number" &&
      typeof k[1] === "string" && typeof k[2] === "string"
    ) return k as Key;
  } catch {
    // falls through
  }
  throw new RangeError(`Invalid "cursor": "${cursor}" is not a cursor this API returned`);
}

/** The JSON shape of one dead letter. */
export function itemOf(d: StoredDeadLetter): DeadLetterItem {
  const a = d.envelope.attributes;
  const attempts = Number(a["dlq.attempts"]);
  return {
    id: d.envelope.id,
    topic: originalTopic(d),
    transport: d.transport,
    attempts: Number.isFinite(attempts) ? attempts : 0,
    error: a["dlq.error"] ?? "",
    ...(a["dlq.handler"] ? { handler: a["dlq.handler"] } : {}),
    deadAt: new Date(d.deadAt).toISOString(),
    publishedAt: new Date(d.envelope.publishedAt).toISOString(),
    payload: d.envelope.payload,
    attributes: redact(a),
  };
}

/**
 * One page of dead letters.
 *
 * @param bus The application's bus.
 * @param o Topic filter, page size and cursor.
 * @returns The page.
 */
export async function listPage(
  bus: EventBus,
  o: { topic?: string; limit: number; cursor?: string },
): Promise<DeadLetterPage> {
  const from = o.cursor !== undefined ? decodeCursor(o.cursor) : undefined;
  const all = (await bus.deadLetters(o.topic !== undefined ? { topic: o.topic } : {})).sort(order);
  const left = from ? rest(all, from) : all;
  const page = left.slice(0, o.limit);
  const next = left.length > o.limit ? encodeCursor(page[page.length - 1]) : null;
  return { items: page.map(itemOf), next, total: all.length };
}

/**
 * Counts per original topic.
 *
 * @param bus The bus.
 * @returns The summary.
 */
export async function summary(bus: EventBus): Promise<DeadLetterSummary> {
  const byTopic: Record<string, number> = {};
  const all = await bus.deadLetters();
  for (const d of all) {
    const t = originalTopic(d);
    byTopic[t] = (byTopic[t] ?? 0) + 1;
  }
  return { total: all.length, byTopic };
}

/** What a redrive or discard acts on. */
export type Selection = { readonly ids: readonly string[] } | { readonly topic: string };

async function idsOf(bus: EventBus, s: Selection): Promise<readonly string[]> {
  if ("ids" in s) return s.ids;
  return (await bus.deadLetters({ topic: s.topic })).map((d) => d.envelope.id);
}

/**
 * Publishes the selected dead letters again on their original topics.
 *
 * @returns How many were moved.
 */
export async function redrive(bus: EventBus, s: Selection): Promise<number> {
  const ids = await idsOf(bus, s);
  return ids.length === 0 ? 0 : await bus.redrive(ids);
}

/**
 * Deletes the selected dead letters.
 *
 * @returns How many were deleted.
 */
export async function discard(bus: EventBus, s: Selection): Promise<number> {
  const ids = await idsOf(bus, s);
  if (ids.length === 0) return 0;
  let n = 0;
  for (const t of Object.values(bus.transports)) n += (await t.deadLetters.take(ids)).length;
  return n;
}
