/**
 * A stand-in payment provider, so the example runs without an account anywhere. Card tokens
 * behave like a provider's test cards: `tok_visa` is charged, `tok_declined` is always refused,
 * `tok_flaky` fails on the first try for each order and is charged on the next (a network error).
 * Charges are idempotent per order id, as a real provider's idempotency keys make them.
 *
 * @module
 */

/** A charge request. */
export interface Charge {
  /** The order id (the idempotency key). */
  orderId: string;
  /** Amount in cents. */
  amount: number;
  /** The card token. */
  token: string;
}

/** What the payments handler needs from a provider. */
export interface PaymentGateway {
  /** Charges once per order id; throws when the charge fails. */
  charge(charge: Charge): Promise<void>;
}

/** Thrown for a refused or failed charge. */
export class PaymentError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "PaymentError";
  }
}

/** The stand-in provider. */
export class FakeGateway implements PaymentGateway {
  /** Order ids charged so far. */
  readonly charged: Set<string> = new Set();
  readonly #tries = new Map<string, number>();

  charge(charge: Charge): Promise<void> {
    if (this.charged.has(charge.orderId)) return Promise.resolve();
    const tries = (this.#tries.get(charge.orderId) ?? 0) + 1;
    this.#tries.set(charge.orderId, tries);
    if (charge.token === "tok_declined") {
      return Promise.reject(new PaymentError("Card declined: tok_declined"));
    }
    if (charge.token === "tok_flaky" && tries === 1) {
      return Promise.reject(new PaymentError("Payment provider timed out"));
    }
    this.charged.add(charge.orderId);
    return Promise.resolve();
  }
}
