/**
 * Internal to the SQL transport: the statements of the hot path (publish, claim, ack, retry,
 * release, extend) and of the registry. Every value is a `$n` parameter; the only text spliced in
 * is the quoted, schema-qualified table names of {@linkcode SqlNames}.
 *
 * @module
 */

import type { SqlNames } from "./_schema.ts";

/** The statement texts of one schema. */
export interface SqlQueries {
  /**
   * `$1` topic, `$2` envelope JSON text. Returns a row when something was inserted (the caller
   * then sends the wake-up).
   */
  readonly publish: string;
  /**
   * Several plain publishes in one statement (one commit): `$1` topics, `$2` envelope JSON texts
   * (parallel arrays). Returns the distinct topics that got at least one row.
   */
  readonly publishMany: string;
  /** As `publish`, plus `$3` channel and `$4` wake payload: notifies in the same transaction. */
  readonly publishTx: string;
  /** As `publish`, plus `$3` dedupe key and `$4` window in ms. */
  readonly publishDedupe: string;
  /** As `publishTx`, plus `$5` dedupe key and `$6` window in ms. */
  readonly publishDedupeTx: string;
  /** Delayed publishes (`_delayed.ts`): as `publish`, plus `$3` due time in ms since the epoch. */
  readonly publishAt: string;
  /** As `publishTx`, plus `$5` due time. */
  readonly publishAtTx: string;
  /** As `publishDedupe`, plus `$5` due time. */
  readonly publishAtDedupe: string;
  /** As `publishDedupeTx`, plus `$7` due time. */
  readonly publishAtDedupeTx: string;
  /**
   * `$1` topic, `$2` group, `$3` instance (`''` for competing), `$4` owner, `$5` visibility ms,
   * `$6` limit. Returns `id, attempt, envelope`.
   */
  readonly claim: string;
  /** `$1` ids. */
  readonly ack: string;
  /** `$1` id, `$2` delay ms, `$3` owner. */
  readonly retry: string;
  /** `$1` ids, `$2` delay ms, `$3` owner: hands claims back without counting an attempt. */
  readonly release: string;
  /** `$1` ids, `$2` visibility ms, `$3` owner. */
  readonly extend: string;
  /** `$1` topic, `$2` group, `$3` distribution. Returns the group's `distribution`. */
  readonly joinGroup: string;
  /** `$1` topics, `$2` groups, `$3` instances, `$4` owner, `$5` ttl ms. */
  readonly beat: string;
  /** `$1` topic, `$2` group, `$3` instance: unregisters it and drops its broadcast rows. */
  readonly leave: string;
  /** Removes expired instances with their broadcast rows, and expired dedupe keys. */
  readonly reap: string;
  /** `$1` topic. Returns a row when the topic has a subscription group. */
  readonly hasGroup: string;
  /** `$1` topic, `$2` group. */
  readonly dropGroup: string;
}

const MS = "* interval '1 millisecond'";

/**
 * Builds the statements for a schema's tables.
 *
 * @param n Quoted names.
 * @returns The statements.
 */
export function sqlQueries(n: SqlNames): SqlQueries {
  const fanOut = (guard: string, notify: boolean, at = "") => `
targets AS (
  SELECT g.grp, coalesce(i.instance, '') AS instance
  FROM ${n.groups} g
  LEFT JOIN ${n.instances} i ON g.distribution = 'broadcast' AND i.topic = g.topic
    AND i.grp = g.grp AND i.expires_at > now()
  WHERE g.topic = $1 AND (g.distribution = 'competing' OR i.instance IS NOT NULL)${guard}
), inserted AS (
  INSERT INTO ${n.queue} (topic, grp, instance, envelope${at && ", available_at"})
  SELECT $1, grp, instance, $2::text::json${
    at && `, to_timestamp(${at}::float8 / 1000)`
  } FROM targets
  RETURNING 1
)
SELECT ${
    notify ? "pg_notify($3, $4)" : "1 AS inserted"
  } FROM (SELECT 1 FROM inserted LIMIT 1) AS any_row`;
  const seen = (key: string, windowMs: string) =>
    `seen AS (
  INSERT INTO ${n.dedupe} AS d (topic, key, expires_at)
  VALUES ($1, ${key}, now() + ${windowMs}::int ${MS})
  ON CONFLICT (topic, key) DO UPDATE SET expires_at = excluded.expires_at
  WHERE d.expires_at <= now()
  RETURNING 1
)`;
  return {
    publish: `WITH ${fanOut("", false)}`,
    publishMany: `WITH m AS (
  SELECT t AS topic, e AS envelope, n FROM unnest($1::text[], $2::text[]) WITH ORDINALITY AS m(t, e, n)
), targets AS (
  SELECT m.topic, m.envelope, m.n, g.grp, coalesce(i.instance, '') AS instance
  FROM m
  JOIN ${n.groups} g ON g.topic = m.topic
  LEFT JOIN ${n.instances} i ON g.distribution = 'broadcast' AND i.topic = g.topic
    AND i.grp = g.grp AND i.expires_at > now()
  WHERE g.distribution = 'competing' OR i.instance IS NOT NULL
), inserted AS (
  INSERT INTO ${n.queue} (topic, grp, instance, envelope)
  SELECT topic, grp, instance, envelope::json FROM targets ORDER BY n
  RETURNING topic
)
SELECT DISTINCT topic FROM inserted`,
    publishTx: `WITH ${fanOut("", true)}`,
    publishDedupe: `WITH ${seen("$3", "$4")}, ${fanOut(" AND EXISTS (SELECT 1 FROM seen)", false)}`,
    publishDedupeTx: `WITH ${seen("$5", "$6")}, ${
      fanOut(" AND EXISTS (SELECT 1 FROM seen)", true)
    }`,
    publishAt: `WITH ${fanOut("", false, "$3")}`,
    publishAtTx: `WITH ${fanOut("", true, "$5")}`,
    publishAtDedupe: `WITH ${seen("$3", "$4")}, ${
      fanOut(" AND EXISTS (SELECT 1 FROM seen)", false, "$5")
    }`,
    publishAtDedupeTx: `WITH ${seen("$5", "$6")}, ${
      fanOut(" AND EXISTS (SELECT 1 FROM seen)", true, "$7")
    }`,
    claim: `UPDATE ${n.queue} AS q
SET claimed_by = $4, claims = q.claims + 1, available_at = now() + $5::int ${MS}
FROM (
  SELECT id FROM ${n.queue}
  WHERE topic = $1 AND grp = $2 AND instance = $3 AND available_at <= now()
  ORDER BY available_at
  LIMIT $6
  FOR UPDATE SKIP LOCKED
) AS c
WHERE q.id = c.id
RETURNING q.id, q.attempt, q.envelope`,
    ack: `DELETE FROM ${n.queue} WHERE id = ANY($1::bigint[])`,
    retry: `UPDATE ${n.queue}
SET attempt = attempt + 1, claimed_by = NULL, available_at = now() + $2::int ${MS}
WHERE id = $1 AND claimed_by = $3`,
    release: `UPDATE ${n.queue}
SET claimed_by = NULL, available_at = now() + $2::int ${MS}
WHERE id = ANY($1::bigint[]) AND claimed_by = $3`,
    extend: `UPDATE ${n.queue} SET available_at = now() + $2::int ${MS}
WHERE id = ANY($1::bigint[]) AND claimed_by = $3`,
    joinGroup: `WITH added AS (
  INSERT INTO ${n.groups} (topic, grp, distribution) VALUES ($1, $2, $3)
  ON CONFLICT (topic, grp) DO NOTHING
  RETURNING distribution
)
SELECT distribution FROM added
UNION ALL
SELECT distribution FROM ${n.groups} WHERE topic = $1 AND grp = $2
LIMIT 1`,
    beat: `INSERT INTO ${n.instances} (topic, grp, instance, owner, expires_at)
SELECT t, g, i, $4, now() + $5::int ${MS}
FROM unnest($1::text[], $2::text[], $3::text[]) AS s(t, g, i)
ON CONFLICT (topic, grp, instance)
DO UPDATE SET owner = excluded.owner, expires_at = excluded.expires_at`,
    leave: `WITH gone AS (
  DELETE FROM ${n.instances} WHERE topic = $1 AND grp = $2 AND instance = $3 RETURNING 1
)
DELETE FROM ${n.queue} WHERE topic = $1 AND grp = $2 AND instance = $3 AND instance <> ''`,
    reap: `WITH gone AS (
  DELETE FROM ${n.instances} WHERE expires_at < now() RETURNING topic, grp, instance
), dropped AS (
  DELETE FROM ${n.queue} q USING gone
  WHERE q.topic = gone.topic AND q.grp = gone.grp AND q.instance = gone.instance
    AND q.instance <> ''
  RETURNING 1
), keys AS (
  DELETE FROM ${n.dedupe} WHERE expires_at < now() RETURNING 1
)
SELECT (SELECT count(*) FROM gone) AS instances, (SELECT count(*) FROM dropped) AS messages`,
    hasGroup: `SELECT 1 FROM ${n.groups} WHERE topic = $1 LIMIT 1`,
    dropGroup: `WITH g AS (DELETE FROM ${n.groups} WHERE topic = $1 AND grp = $2 RETURNING 1),
i AS (DELETE FROM ${n.instances} WHERE topic = $1 AND grp = $2 RETURNING 1)
DELETE FROM ${n.queue} WHERE topic = $1 AND grp = $2`,
  };
}
