/**
 * What every realtime broker (memory, kvStream, kvPubSub, sql) shares on publish and subscribe:
 * the topic name of a topic argument and the payload check against a `Topic`.
 *
 * @module
 */

import { ValidationException } from "@fw/runtime";
import { isTopic } from "../topic.ts";
import type { RealtimeTopic } from "./realtime.ts";

/** The name of a topic argument. */
export function topicName(topic: RealtimeTopic): string {
  const name = typeof topic === "string" ? topic : topic?.name;
  if (typeof name !== "string" || !name) {
    throw new TypeError(`Invalid topic "${String(name)}": expected a topic or a topic name`);
  }
  return name;
}

/** Validates `payload` against `topic` when it is a `Topic`; throws a `ValidationException`. */
export function checkPayload(topic: RealtimeTopic, payload: unknown): void {
  if (!isTopic(topic)) return;
  const checked = topic.validate(payload);
  if (!checked.ok) throw new ValidationException(checked.errors);
}
