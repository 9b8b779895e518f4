/**
 * Reads what `kvStream` needs from `XINFO STREAM` and `TIME`.
 *
 * @module
 */

import type { RedisClient } from "../_redis.ts";
import { type StreamId, streamId } from "./_kv_common.ts";

/** The window of one stream. */
export interface StreamInfo {
  /** The last id the stream issued (kept when entries are trimmed). */
  readonly last: StreamId;
  /** The oldest retained entry (`undefined` when the stream is empty). */
  readonly first: StreamId | undefined;
  /** Entries ever added minus entries retained: how many were trimmed (or deleted). */
  readonly trimmed: number;
}

/** `XINFO STREAM key`; `undefined` when the key does not exist. */
export async function readStreamInfo(
  client: RedisClient,
  key: string,
): Promise<StreamInfo | undefined> {
  let reply: unknown;
  try {
    reply = await client.sendCommand(["XINFO", "STREAM", key]);
  } catch (error) {
    if (/no such key/i.test(String((error as Error)?.message))) return undefined;
    throw error;
  }
  const fields = reply as unknown[];
  let last: StreamId | undefined, first: StreamId | undefined;
  let length = 0, added = 0;
  for (let i = 0; i + 1 < fields.length; i += 2) {
    const name = String(fields[i]), value = fields[i + 1];
    if (name === "last-generated-id") last = streamId(String(value));
    if (name === "first-entry" && Array.isArray(value)) first = streamId(String(value[0]));
    if (name === "length") length = Number(value);
    if (name === "entries-added") added = Number(value);
  }
  if (!last) throw new Error(`Unexpected XINFO STREAM reply for "${key}"`);
  return { last, first, trimmed: Math.max(0, added - length) };
}

/** The Redis server's clock in ms (`TIME`), which stream ids are made of. */
export async function redisTime(client: RedisClient): Promise<number> {
  const [seconds, micros] = await client.sendCommand(["TIME"]) as [string, string];
  return Number(seconds) * 1000 + Math.floor(Number(micros) / 1000);
}
