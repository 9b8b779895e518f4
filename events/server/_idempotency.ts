/**
 * The publish idempotency window: which message ids were accepted, with a digest of the exact
 * request bytes and the answer given, so that a byte-identical retry gets the same answer and
 * nothing is published twice, while a different body under the same id is a conflict. Bounded in
 * time (`windowMs`) and size (`maxKeys`, oldest first out). Internal.
 *
 * @module
 */

import type { Clock } from "@fw/runtime";
import type { PublishResponse } from "../protocol/frames.ts";

interface Entry {
  readonly digest: string;
  readonly at: number;
  /** The answer, once the publish completed; `undefined` while it is in flight. */
  response: PublishResponse | undefined;
}

/** What the window knows about an id. */
export type Seen =
  | { readonly state: "new" }
  | { readonly state: "conflict" }
  | { readonly state: "in_progress" }
  | { readonly state: "done"; readonly response: PublishResponse };

/** SHA-256 of the bytes, as hex. */
export async function digestOf(bytes: Uint8Array): Promise<string> {
  const hash = new Uint8Array(await crypto.subtle.digest("SHA-256", bytes as BufferSource));
  let out = "";
  for (const b of hash) out += (b < 16 ? "0" : "") + b.toString(16);
  return out;
}

/** Accepted publish ids of the last `windowMs`. */
export class IdempotencyWindow {
  readonly #entries = new Map<string, Entry>();

  constructor(
    readonly windowMs: number,
    readonly maxKeys: number,
    readonly clock: Clock,
  ) {}

  /**
   * Looks an id up and, when it is new, reserves it for this digest (in flight).
   *
   * @param id The message id.
   * @param digest The digest of the request bytes.
   * @returns What is known.
   */
  claim(id: string, digest: string): Seen {
    if (this.windowMs <= 0) return { state: "new" };
    const now = this.clock.now();
    this.#expire(now);
    const entry = this.#entries.get(id);
    if (entry !== undefined) {
      if (entry.digest !== digest) return { state: "conflict" };
      if (entry.response === undefined) return { state: "in_progress" };
      return { state: "done", response: entry.response };
    }
    this.#entries.set(id, { digest, at: now, response: undefined });
    while (this.#entries.size > this.maxKeys) {
      this.#entries.delete(this.#entries.keys().next().value!);
    }
    return { state: "new" };
  }

  /** Records the answer of a reserved id. */
  complete(id: string, response: PublishResponse): void {
    const entry = this.#entries.get(id);
    if (entry !== undefined) entry.response = response;
  }

  /** Forgets a reserved id (the publish failed, so a retry must run again). */
  release(id: string): void {
    const entry = this.#entries.get(id);
    if (entry !== undefined && entry.response === undefined) this.#entries.delete(id);
  }

  #expire(now: number): void {
    for (const [id, entry] of this.#entries) {
      if (now - entry.at < this.windowMs) break;
      this.#entries.delete(id);
    }
  }
}
