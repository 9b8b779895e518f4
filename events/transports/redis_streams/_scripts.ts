/**
 * Internal to the Redis Streams transport: the Lua scripts that make its multi-key steps atomic
 * (publish with dedupe, retry scheduling, moving due retries, reaping an instance, dead-letter
 * store updates), run with `EVALSHA` and loaded with `EVAL` the first time Redis does not know
 * them (after a restart, too). Only commands Redis 7.0 has.
 *
 * @module
 */

import type { RedisClient } from "../../_redis.ts";

/** A Lua script sent by its SHA-1, with the source as fallback. */
export class Script {
  readonly #source: string;
  #sha: string | undefined;
  #hashing: Promise<string> | undefined;

  constructor(source: string) {
    this.#source = source;
  }

  async #digest(): Promise<string> {
    const bytes = new Uint8Array(
      await crypto.subtle.digest("SHA-1", new TextEncoder().encode(this.#source)),
    );
    return this.#sha = Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");
  }

  /**
   * Runs the script.
   *
   * @param client Connection.
   * @param keys Its keys.
   * @param args Its arguments.
   * @returns The raw reply.
   */
  run(client: RedisClient, keys: readonly string[], args: readonly string[]): Promise<unknown> {
    const sha = this.#sha;
    if (sha === undefined) {
      return (this.#hashing ??= this.#digest()).then(() => this.run(client, keys, args));
    }
    return client.sendCommand(["EVALSHA", sha, String(keys.length), ...keys, ...args]).catch(
      (err) => {
        if (!String((err as Error)?.message).startsWith("NOSCRIPT")) throw err;
        return client.sendCommand([
          "EVAL",
          this.#source,
          String(keys.length),
          ...keys,
          ...args,
        ]);
      },
    );
  }
}

/**
 * Publish. KEYS: stream, [dedupe]. ARGV: envelope JSON, dedupe window ms, mode (`s`: when the
 * stream exists, `g`: when it has a consumer group). Returns 1 (added), 0 (no subscriber) or -1
 * (a repeat of the dedupe key within the window).
 */
export const PUBLISH: Script = new Script(`
local s = KEYS[1]
if ARGV[3] == 'g' then
  local g = redis.pcall('XINFO', 'GROUPS', s)
  if type(g) ~= 'table' or g.err or #g == 0 then return 0 end
elseif redis.call('EXISTS', s) == 0 then
  return 0
end
if KEYS[2] and not redis.call('SET', KEYS[2], '1', 'NX', 'PX', ARGV[2]) then return -1 end
redis.call('XADD', s, '*', 'e', ARGV[1])
return 1
`);

/**
 * Publish a batch (envelopes without a dedupe key, one topic). KEYS: stream. ARGV: envelope
 * JSON... Returns how many were added (0 when the stream does not exist: no subscriber).
 */
export const PUBLISH_MANY: Script = new Script(`
if redis.call('EXISTS', KEYS[1]) == 0 then return 0 end
for i = 1, #ARGV do redis.call('XADD', KEYS[1], '*', 'e', ARGV[i]) end
return #ARGV
`);

/**
 * Retry: acknowledges an entry and schedules its next attempt, when the entry was still pending.
 * KEYS: source stream, delayed set. ARGV: group, entry id, due time, member, `1` to delete the
 * entry (retry streams). Returns 1 when scheduled, 0 when the entry was no longer pending.
 */
export const RETRY: Script = new Script(`
local n = redis.call('XACK', KEYS[1], ARGV[1], ARGV[2])
if n == 1 then redis.call('ZADD', KEYS[2], ARGV[3], ARGV[4]) end
if ARGV[5] == '1' then redis.call('XDEL', KEYS[1], ARGV[2]) end
return n
`);

/** Acknowledges and deletes retry-stream entries. KEYS: retry stream. ARGV: group, ids... */
export const ACK_DELETE: Script = new Script(`
local n = redis.call('XACK', KEYS[1], unpack(ARGV))
redis.call('XDEL', KEYS[1], unpack(ARGV, 2))
return n
`);

/**
 * Moves due retries to the retry stream. KEYS: delayed set, retry stream. ARGV: now, limit.
 * Members are `<attempt>|<unique>|<envelope JSON>`. Returns [moved, next due time or ''].
 */
export const MOVE_DUE: Script = new Script(`
local due = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', ARGV[1], 'LIMIT', 0, tonumber(ARGV[2]))
for _, m in ipairs(due) do
  local a, e = string.match(m, '^(%d+)|[^|]*|(.*)$')
  if a then redis.call('XADD', KEYS[2], '*', 'e', e, 'a', a) end
  redis.call('ZREM', KEYS[1], m)
end
local nxt = redis.call('ZRANGE', KEYS[1], 0, 0, 'WITHSCORES')
return {#due, nxt[2] or ''}
`);

/**
 * Reaps an instance whose heartbeat expired. KEYS: registry, topic stream, retry stream, delayed
 * set. ARGV: member, now, Redis group, consumer, kind (`b` broadcast, `c` competing).
 *
 * A broadcast instance's group is destroyed with its retry stream and delayed set (its pending
 * entries were for it alone); returns how many entries it still held. A competing instance's
 * consumer is deleted only when it holds no pending entry (else -2: the group's live instances
 * take them over first). -1 when the instance is alive again or already gone.
 */
export const REAP: Script = new Script(`
local score = redis.call('ZSCORE', KEYS[1], ARGV[1])
if not score or tonumber(score) > tonumber(ARGV[2]) then return -1 end
local streams = {KEYS[2], KEYS[3]}
if ARGV[5] == 'b' then
  local held = 0
  for _, s in ipairs(streams) do
    local p = redis.pcall('XPENDING', s, ARGV[3])
    if type(p) == 'table' and not p.err then held = held + p[1] end
    redis.pcall('XGROUP', 'DESTROY', s, ARGV[3])
  end
  redis.call('DEL', KEYS[3], KEYS[4])
  redis.call('ZREM', KEYS[1], ARGV[1])
  return held
end
for _, s in ipairs(streams) do
  local p = redis.pcall('XPENDING', s, ARGV[3], '-', '+', 1, ARGV[4])
  if type(p) == 'table' and not p.err and #p > 0 then return -2 end
end
for _, s in ipairs(streams) do redis.pcall('XGROUP', 'DELCONSUMER', s, ARGV[3], ARGV[4]) end
redis.call('ZREM', KEYS[1], ARGV[1])
return 0
`);

/**
 * Adds a dead letter and evicts the oldest over the limit. KEYS: store. ARGV: envelope id,
 * record JSON, limit. Returns the evicted records.
 */
export const DEAD_ADD: Script = new Script(`
redis.call('XADD', KEYS[1], '*', 'id', ARGV[1], 'r', ARGV[2])
local excess = redis.call('XLEN', KEYS[1]) - tonumber(ARGV[3])
local out = {}
if excess > 0 then
  local old = redis.call('XRANGE', KEYS[1], '-', '+', 'COUNT', excess)
  for _, e in ipairs(old) do
    redis.call('XDEL', KEYS[1], e[1])
    out[#out + 1] = e[2][4]
  end
end
return out
`);

/** Removes and returns the dead letters with these envelope ids. KEYS: store. ARGV: ids... */
export const DEAD_TAKE: Script = new Script(`
local want = {}
for _, id in ipairs(ARGV) do want[id] = true end
local out = {}
for _, e in ipairs(redis.call('XRANGE', KEYS[1], '-', '+')) do
  if want[e[2][2]] then
    redis.call('XDEL', KEYS[1], e[1])
    out[#out + 1] = e[2][4]
  end
end
return out
`);
