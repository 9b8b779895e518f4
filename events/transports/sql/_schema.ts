/**
 * Internal to the SQL transport: the tables and the idempotent migration that creates them.
 *
 * - `queue`: one row per message and receiving subscription group (per live instance for a
 *   broadcast group). `available_at` is when it may next be claimed: a claim moves it to the end of
 *   the visibility deadline, a retry to the end of the back-off. `claimed_by` names the transport
 *   (process) holding the claim; `claims` counts claims, `attempt` the consumer's attempts.
 * - `groups`: the subscription groups of each topic and their distribution (kept while no
 *   instance is live, so a competing group's messages wait for the next one).
 * - `instances`: live subscriber instances, kept alive by heartbeats and reaped when they expire.
 * - `dead_letters`: dead letters with no `<topic>.dlq` subscriber, bounded per topic.
 * - `dedupe`: dedupe keys seen within the window.
 *
 * @module
 */

import { quoteIdent } from "../../_postgres.ts";

/** Quoted, schema-qualified names of the transport's tables and its wake-up channel. */
export interface SqlNames {
  readonly schema: string;
  readonly queue: string;
  readonly groups: string;
  readonly instances: string;
  readonly deadLetters: string;
  readonly dedupe: string;
  /** The `NOTIFY` channel (unquoted: the client quotes it for `LISTEN`). */
  readonly channel: string;
}

/**
 * The names for a schema (already checked to be a plain identifier).
 *
 * @param schema Schema name.
 * @returns Quoted names.
 */
export function sqlNames(schema: string): SqlNames {
  const s = quoteIdent(schema);
  return {
    schema: s,
    queue: `${s}.queue`,
    groups: `${s}.groups`,
    instances: `${s}.instances`,
    deadLetters: `${s}.dead_letters`,
    dedupe: `${s}.dedupe`,
    channel: `${schema}.wake`,
  };
}

/**
 * The migration: one multi-statement script that runs as one transaction under an advisory lock
 * (so two processes starting at once do not race on `CREATE ... IF NOT EXISTS`). Safe to run any
 * number of times.
 *
 * @param schema Schema name (a plain identifier: only letters, digits and `_`).
 * @returns The SQL text.
 */
export function migrationSql(schema: string): string {
  const n = sqlNames(schema);
  // `schema` is a checked identifier: as a string literal it needs no escaping.
  return `
SELECT pg_advisory_xact_lock(hashtext('fw_events_migrate:${schema}'));
CREATE SCHEMA IF NOT EXISTS ${n.schema};
CREATE TABLE IF NOT EXISTS ${n.queue} (
  id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  topic text NOT NULL,
  grp text NOT NULL,
  instance text NOT NULL DEFAULT '',
  envelope json NOT NULL,
  attempt integer NOT NULL DEFAULT 1,
  available_at timestamptz NOT NULL DEFAULT now(),
  claimed_by text,
  claims integer NOT NULL DEFAULT 0,
  enqueued_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX IF NOT EXISTS queue_ready ON ${n.queue} (topic, grp, instance, available_at);
CREATE TABLE IF NOT EXISTS ${n.groups} (
  topic text NOT NULL,
  grp text NOT NULL,
  distribution text NOT NULL CHECK (distribution IN ('competing', 'broadcast')),
  created_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (topic, grp)
);
CREATE TABLE IF NOT EXISTS ${n.instances} (
  topic text NOT NULL,
  grp text NOT NULL,
  instance text NOT NULL,
  owner text NOT NULL,
  expires_at timestamptz NOT NULL,
  PRIMARY KEY (topic, grp, instance)
);
CREATE TABLE IF NOT EXISTS ${n.deadLetters} (
  id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  topic text NOT NULL,
  original_topic text NOT NULL,
  message_id text NOT NULL,
  envelope json NOT NULL,
  dead_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX IF NOT EXISTS dead_letters_topic ON ${n.deadLetters} (original_topic, id);
CREATE TABLE IF NOT EXISTS ${n.dedupe} (
  topic text NOT NULL,
  key text NOT NULL,
  expires_at timestamptz NOT NULL,
  PRIMARY KEY (topic, key)
);
`;
}
