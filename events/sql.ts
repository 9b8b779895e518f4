/**
 * `@fw/events/sql`: fw on PostgreSQL. `sqlTransport` is a persistent handler transport (messages
 * as rows, claimed with `FOR UPDATE SKIP LOCKED`, woken by `LISTEN`/`NOTIFY`, publishable inside
 * your own transaction); `sqlRealtime` is a live-only realtime broker over `LISTEN`/`NOTIFY`. Both
 * reach PostgreSQL through the structural {@linkcode SqlClient} interface: pass `url` and fw
 * creates (and closes) a postgres.js client, or pass a compatible `client` of your own.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { sqlTransport } from "@fw/events/sql";
 * assert.throws(
 *   () => sqlTransport({ url: "postgres://app@127.0.0.1/app", schema: "bad-name" }),
 *   /Invalid sqlTransport\(\) option "schema"/,
 * );
 * ```
 *
 * @module
 */

export {
  type SqlClient,
  type SqlListenHandle,
  type SqlQueryable,
  type SqlRow,
  type SqlSource,
} from "./_postgres.ts";
export {
  SqlTransport,
  sqlTransport,
  type SqlTransportOptions,
} from "./transports/sql/sql_transport.ts";
export {
  NOTIFY_LIMIT_BYTES,
  RealtimeMessageTooLargeError,
  SqlRealtime,
  sqlRealtime,
  type SqlRealtimeOptions,
} from "./realtime/sql_realtime.ts";
