/**
 * Internal to the Redis Streams transport: the schedule state. One string key per schedule,
 * `<prefix>:schedule:<name>`, holding the record as JSON. The first write is `SET ... NX` (only
 * one instance creates it); later ones are a compare-and-set script that writes only when the key
 * still holds the JSON the writer read, so exactly one instance moves a schedule's `tick` forward
 * and runs that tick.
 *
 * @module
 */

import type { RedisClient } from "../../_redis.ts";
import {
  parseScheduleRecord,
  type ScheduleRecord,
  type ScheduleStore,
  type StoredSchedule,
} from "../../schedule/store.ts";
import { Script } from "./_scripts.ts";

/** KEYS: the record. ARGV: the JSON read, the JSON to write. Returns 1 when written. */
const COMPARE_AND_SET = new Script(`
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 0 end
redis.call('SET', KEYS[1], ARGV[2])
return 1
`);

/** Schedule state in Redis. */
export class RedisScheduleStore implements ScheduleStore {
  readonly #redis: () => Promise<RedisClient>;
  readonly #prefix: string;

  /**
   * @param redis The transport's main connection (opened on first use).
   * @param prefix The transport's key prefix.
   */
  constructor(redis: () => Promise<RedisClient>, prefix: string) {
    this.#redis = redis;
    this.#prefix = prefix;
  }

  #key(name: string): string {
    return `${this.#prefix}:schedule:${name}`;
  }

  async read(name: string): Promise<StoredSchedule | undefined> {
    const raw = await (await this.#redis()).sendCommand(["GET", this.#key(name)]);
    if (raw === null || raw === undefined) return undefined;
    const text = String(raw);
    const record = parseScheduleRecord(text);
    // An unreadable value is replaced by the next write (compared against what is there).
    return { record: record ?? { since: Date.now(), runs: [] }, version: text };
  }

  async write(
    name: string,
    record: ScheduleRecord,
    version: string | undefined,
  ): Promise<boolean> {
    const client = await this.#redis();
    const json = JSON.stringify(record);
    if (version === undefined) {
      return await client.sendCommand(["SET", this.#key(name), json, "NX"]) !== null;
    }
    return Number(await COMPARE_AND_SET.run(client, [this.#key(name)], [version, json])) === 1;
  }
}
