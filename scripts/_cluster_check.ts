/**
 * What `deno task cluster` checks once the load has stopped and the cluster is quiet: requests,
 * orders, events, dead letters and the live subscribers, as rows of a table with a verdict each.
 *
 * @module
 */

import type { Db } from "../examples/cluster/db.ts";
import type { HttpTally, Load } from "./_cluster_load.ts";
import type { Subscriber } from "./_cluster_subscribers.ts";

/** One row of the report: what, the figure, and whether it passes (undefined: information). */
export interface Row {
  what: string;
  value: string;
  ok?: boolean;
}

/** What one subscriber's ids say against the stream. */
interface Seen {
  missing: number;
  outOfOrder: number;
  duplicates: number;
}

function compare(s: Subscriber, stream: readonly string[], index: Map<string, number>): Seen {
  const start = s.from === "0-0" ? 0 : (index.get(s.from) ?? -1) + 1;
  const expected = stream.slice(start);
  const got = new Set<string>();
  let duplicates = 0;
  let outOfOrder = 0;
  let last = start - 1;
  for (const id of s.ids) {
    if (got.has(id)) duplicates++;
    got.add(id);
    const at = index.get(id) ?? -1;
    if (at <= last) outOfOrder++;
    last = Math.max(last, at);
  }
  const missing = expected.filter((id) => !got.has(id)).length;
  return { missing, outOfOrder, duplicates };
}

/**
 * The live rows: every subscriber received every id after the one it subscribed from, in
 * order, once; with reconnects and `recovered` counts.
 *
 * @param label `eventClient (WebSocket)` or `EventSource (SSE)`.
 * @param subscribers The subscribers of that kind.
 * @param stream Every id of the live stream, in order (from Redis).
 * @returns The rows.
 */
export function liveRows(
  label: string,
  subscribers: readonly Subscriber[],
  stream: readonly string[],
): Row[] {
  const index = new Map(stream.map((id, i) => [id, i]));
  let missing = 0, outOfOrder = 0, duplicates = 0, withProblems = 0, received = 0;
  let reconnects = 0, recovered = 0, notRecovered = 0, gaps = 0, errors = 0;
  let firstError: string | undefined;
  for (const s of subscribers) {
    const seen = compare(s, stream, index);
    missing += seen.missing;
    outOfOrder += seen.outOfOrder;
    duplicates += seen.duplicates;
    if (seen.missing + seen.outOfOrder + seen.duplicates > 0) withProblems++;
    received += s.ids.length;
    reconnects += Math.max(0, s.connections - 1);
    recovered += s.recovered;
    notRecovered += s.notRecovered;
    gaps += s.gaps;
    errors += s.notices;
    firstError ??= s.firstNotice;
  }
  const rows: Row[] = [
    { what: "subscribers", value: String(subscribers.length), ok: subscribers.length > 0 },
    { what: "messages received (all subscribers)", value: String(received), ok: received > 0 },
    { what: "messages missed (gaps by id)", value: String(missing), ok: missing === 0 },
    {
      what: "out of order / duplicated",
      value: `${outOfOrder} / ${duplicates}`,
      ok: outOfOrder + duplicates === 0,
    },
    { what: "subscribers with any problem", value: String(withProblems), ok: withProblems === 0 },
    { what: "reconnects (all subscribers)", value: String(reconnects) },
    {
      what: "subscribed recovered=true / false",
      value: `${recovered} / ${notRecovered}`,
      ok: notRecovered === 0,
    },
    { what: "gaps reported by the server", value: String(gaps), ok: gaps === 0 },
    {
      what: "notices (connection lost, then resumed)",
      value: `${errors}${firstError ? ` (first: ${firstError.slice(0, 50)})` : ""}`,
    },
  ]; // deno-fmt-ignore
  return rows.map((r) => ({ ...r, what: `live ${label}: ${r.what}` }));
}

/** ` (mostly <the most frequent reason>)` for a tally with unanswered requests. */
function why(tally: HttpTally): string {
  const top = [...tally.failures].sort((a, b) => b[1] - a[1])[0];
  return top ? ` (mostly ${top[0]})` : "";
}

/**
 * The request, order, event and dead-letter rows, read from the load's tallies and the database.
 *
 * @param load The finished load.
 * @param db The example's database.
 * @returns The rows.
 */
export async function dataRows(load: Load, db: Db): Promise<Row[]> {
  const w = load.writes, r = load.reads;
  const inDb = new Map<string, number>();
  for (const row of await db`SELECT id::text AS id, count(*)::int AS n FROM orders GROUP BY id`) {
    inDb.set(row.id as string, row.n as number);
  }
  const handled = new Map<string, number>();
  for (
    const row
      of await db`SELECT order_id::text AS id, count(*)::int AS n FROM handled GROUP BY order_id`
  ) handled.set(row.id as string, row.n as number);
  const accepted = [...load.accepted];
  const lostOrders = accepted.filter((id) => !inDb.has(id)).length;
  const twice = [...inDb.values()].filter((n) => n > 1).length;
  const unacknowledged = [...inDb.keys()].filter((id) => !load.accepted.has(id)).length;
  const unhandled = [...inDb.keys()].filter((id) => !handled.has(id)).length;
  let duplicates = 0;
  for (const n of handled.values()) duplicates += n - 1;
  const [{ dead }] = await db`SELECT count(*)::int AS dead FROM dead_letters`;
  const [{ left }] = await db`SELECT count(*)::int AS left FROM queue`;
  return [
    { what: "HTTP writes sent (POST /orders, retries included)", value: String(w.sent) },
    { what: "HTTP writes unanswered", value: `${w.unanswered}${why(w)}`, ok: w.unanswered === 0 },
    {
      what: "HTTP writes non-2xx (retried by the client, same id)",
      value: `${w.non2xx}${w.non2xx ? ` (${w.non2xxDetail})` : ""}`,
    },
    { what: "HTTP reads sent (GET /orders/:id)", value: String(r.sent) },
    { what: "HTTP reads unanswered", value: `${r.unanswered}${why(r)}`, ok: r.unanswered === 0 },
    { what: "HTTP reads non-2xx", value: `${r.non2xx}${r.non2xx ? ` (${r.non2xxDetail})` : ""}` },
    { what: "orders accepted (2xx)", value: String(accepted.length), ok: accepted.length > 0 },
    {
      what: "orders given up by the client",
      value: String(load.abandoned.size),
      ok: load.abandoned.size === 0,
    },
    {
      what: "accepted orders missing from the database",
      value: String(lostOrders),
      ok: lostOrders === 0,
    },
    { what: "orders stored more than once", value: String(twice), ok: twice === 0 },
    { what: "orders stored but never acknowledged", value: String(unacknowledged) },
    { what: "events published (one per stored order)", value: String(inDb.size) },
    { what: "events never handled", value: String(unhandled), ok: unhandled === 0 },
    { what: "events handled more than once (duplicates)", value: String(duplicates) },
    { what: "dead letters", value: String(dead), ok: dead === 0 },
    { what: "deliveries left in the queue", value: String(left), ok: left === 0 },
  ]; // deno-fmt-ignore
}

/**
 * Formats rows as a table with a verdict column and a final line.
 *
 * @param rows The rows.
 * @returns The table text and whether every checked row passed.
 */
export function table(rows: readonly Row[]): { text: string; ok: boolean } {
  const width = Math.max(...rows.map((r) => r.what.length));
  const valueWidth = Math.max(...rows.map((r) => r.value.length));
  const lines = rows.map((r) =>
    `| ${r.what.padEnd(width)} | ${r.value.padStart(valueWidth)} | ${
      r.ok === undefined ? "    " : r.ok ? "ok  " : "FAIL"
    } |`
  );
  const ok = rows.every((r) => r.ok !== false);
  const rule = `|${"-".repeat(width + 2)}|${"-".repeat(valueWidth + 2)}|------|`;
  const head = `| ${"check".padEnd(width)} | ${"value".padStart(valueWidth)} | ok   |`;
  return { text: [head, rule, ...lines].join("\n"), ok };
}
