/**
 * Type-level check: a `@google-cloud/pubsub` `PubSub` instance (and its `Topic`, `Subscription` and
 * `Message`) satisfies the shapes `googlePubSubClient()` from `@fw/events/cloud` needs, so the
 * adapter takes it with no cast. Nothing here talks to Google: the package is only type-checked.
 */

import assert from "node:assert/strict";
import type { Message, PubSub, Subscription, Topic } from "@google-cloud/pubsub";
import {
  type CloudPubSubClient,
  type GoogleMessageLike,
  googlePubSubClient,
  type GooglePubSubLike,
  type GoogleSubscriptionLike,
  type GoogleTopicLike,
} from "@fw/events/cloud";

type Satisfies<T, U> = [T] extends [U] ? true : false;
function expectType<T extends true>(_: T): void {}
function expectFalse<T extends false>(_: T): void {}

Deno.test("googlePubSubClient() takes a @google-cloud/pubsub PubSub as it is (types)", () => {
  expectType<Satisfies<PubSub, GooglePubSubLike>>(true);
  expectType<Satisfies<Topic, GoogleTopicLike>>(true);
  expectType<Satisfies<Subscription, GoogleSubscriptionLike>>(true);
  expectType<Satisfies<Message, GoogleMessageLike>>(true);
  // The check can fail: an object missing `publishMessage` is not a topic.
  expectFalse<Satisfies<Omit<Topic, "publishMessage">, GoogleTopicLike>>(false);
  const adapt = (pubsub: PubSub): CloudPubSubClient => googlePubSubClient(pubsub);
  assert.equal(typeof adapt, "function");
});
