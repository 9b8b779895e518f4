/**
 * The audit log the event handlers write and `GET /audit` reads (a DI singleton).
 *
 * @module
 */

import { provider } from "@fw/runtime";

/** One audit entry. */
export interface AuditEntry {
  /** What happened. */
  event: string;
  /** The order id. */
  orderId: string;
  /** Trace id carried from the HTTP request through the event. */
  traceId: string;
  /** The user who placed the order, when signed in. */
  user?: string;
}

/** The audit log: most recent last, capped at 100 entries. */
export class AuditLog {
  readonly entries: AuditEntry[] = [];

  /** Appends one entry. */
  add(entry: AuditEntry): void {
    this.entries.push(entry);
    if (this.entries.length > 100) this.entries.shift();
  }
}

/** One audit log per application. */
export const Audit = provider({ name: "Audit", factory: () => new AuditLog() });
