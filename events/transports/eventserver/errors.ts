/**
 * `EventServerPublishError`: a publish through a managed Event Server that did not succeed, with
 * the outcome that tells the caller whether to retry.
 *
 * @module
 */

/**
 * What a failed publish means for the caller:
 *
 * - `permanent`: the request is wrong (invalid payload, unknown topic, refused token or access,
 *   a `409 conflict`, any other 4xx); retrying the same bytes fails the same way.
 * - `retryable`: nothing was published (`503 unavailable`, `409 in_progress`); retry later.
 * - `ambiguous`: the server failed part-way (`500 internal`, any other 5xx), or no answer came
 *   (network error, time-out); the message may have been published. Retrying the same message
 *   (same id, same bytes) is safe: the server accepts it once.
 */
export type EventServerOutcome = "permanent" | "retryable" | "ambiguous";

/**
 * A publish the managed Event Server did not accept, after the transport's own retries.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { EventServerPublishError } from "@fw/events";
 * const e = new EventServerPublishError("retryable", "Topic busy", { status: 503, code: "unavailable", messageId: "m-1", attempts: 3 });
 * assert.equal(e.outcome, "retryable");
 * ```
 */
export class EventServerPublishError extends Error {
  /** Permanent, retryable or ambiguous. */
  readonly outcome: EventServerOutcome;
  /** HTTP status of the last answer (undefined when none came). */
  readonly status?: number;
  /** The server's error code (`invalid_payload`, `unavailable`, ...), or `network` / `timeout`. */
  readonly code: string;
  /** The message id. */
  readonly messageId: string;
  /** How many requests were sent. */
  readonly attempts: number;

  /**
   * Creates the error.
   *
   * @param outcome What the failure means.
   * @param message Detail.
   * @param details Status, code, message id and attempts.
   */
  constructor(
    outcome: EventServerOutcome,
    message: string,
    details: { status?: number; code: string; messageId: string; attempts: number },
  ) {
    super(message);
    this.name = "EventServerPublishError";
    this.outcome = outcome;
    if (details.status !== undefined) this.status = details.status;
    this.code = details.code;
    this.messageId = details.messageId;
    this.attempts = details.attempts;
  }
}

/** The outcome of a non-2xx answer: the body's `outcome`, else by status (5xx ambiguous). */
export function outcomeOf(status: number, body: unknown): EventServerOutcome {
  const o = (body as { outcome?: unknown } | null)?.outcome;
  if (o === "permanent" || o === "retryable" || o === "ambiguous") return o;
  return status >= 500 ? "ambiguous" : "permanent";
}
