/**
 * `@fw/events/kvstore`: fw on Redis. The Redis transports and realtime brokers live here, and all of
 * them reach Redis through the structural {@linkcode RedisClient} interface: pass `url` and fw
 * creates (and closes) a node-redis client, or pass a compatible `client` of your own.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import type { RedisClient } from "@fw/events/kvstore";
 * // any object with these methods works as a client (a node-redis v5 client has them all)
 * const methods: (keyof RedisClient)[] = ["sendCommand", "duplicate", "connect", "close", "on"];
 * assert.equal(methods.length, 5);
 * ```
 *
 * @module
 */

export type {
  RedisClient,
  RedisClusterClient,
  RedisPubSubListener,
  RedisSource,
} from "./_redis.ts";
export {
  KvStreamTransport,
  kvStreamTransport,
  type KvStreamTransportOptions,
} from "./transports/redis_streams/redis_streams.ts";
export {
  RedisDeadLetters,
  type RedisDeadLettersOptions,
} from "./transports/redis_streams/dead_letters.ts";
export { KvPubSub, kvPubSub, type KvPubSubOptions } from "./realtime/kv_pubsub.ts";
export { KvStream, kvStream, type KvStreamOptions } from "./realtime/kv_stream.ts";
