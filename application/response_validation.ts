/**
 * Response validation outside production: a handler's result is checked against
 * the schema declared for the response status (`.returns()` or `.response()`), and each mismatch
 * is logged as `WARN [response-validation] <path> — <detail>`. The response is never changed.
 *
 * Skipped for `HttpResponse` and `Response` results, `undefined` and `null`, strings that are not
 * JSON (a `.returns(String)` string is checked as a string), and statuses with no schema.
 *
 * Loaded only outside production: `api()` imports it at warmup then, `@fw/application/compile`
 * always; it installs `responseCheck` in `responseChecks` (`compile_endpoint.ts`).
 *
 * @module
 */

import {
  compile,
  joinMessages,
  type Logger,
  type Schema,
  type SchemaNode,
  type Validator,
} from "@fw/runtime";
import type { EndpointMeta } from "./endpoint_types.ts";
import { HttpResponse } from "./http_response.ts";
import { type ResponseCheck, responseChecks } from "./compile_endpoint.ts";

export type { ResponseCheck, ResponseCheckContext } from "./compile_endpoint.ts";

interface Entry {
  readonly validate: Validator<unknown>;
  readonly stringSchema: boolean;
}

function entry(node: SchemaNode): Entry {
  return {
    validate: compile({ node } as Schema<unknown>, "response") as Validator<unknown>,
    stringSchema: node.kind === "string",
  };
}

function jsonOf(text: string): { ok: boolean; value?: unknown } {
  try {
    return { ok: true, value: JSON.parse(text) };
  } catch {
    return { ok: false };
  }
}

/**
 * Builds the response check of an endpoint, once, at warmup.
 *
 * @param meta The endpoint's declarations.
 * @param source Holds the logger warnings go to (the application context).
 * @returns The check, or `undefined` when no response schema is declared.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { createLogger, Int, MemorySink } from "@fw/runtime";
 * import { endpoint } from "@fw/application";
 * import { responseCheck } from "./response_validation.ts";
 *
 * const sink = new MemorySink();
 * const def = endpoint().returns({ id: Int }).handle(() => ({ id: 1 }));
 * const check = responseCheck(def.meta, { logger: createLogger({ level: "info", sink }) });
 * check?.({ id: "one" }, { statusCode: 200, path: () => "/things/1" });
 * assert.equal(sink.records[0].message, "[response-validation] /things/1 — response.id must be an integer");
 * ```
 */
export function responseCheck(
  meta: EndpointMeta,
  source: { readonly logger: Logger },
): ResponseCheck | undefined {
  const byStatus = new Map<number, Entry>();
  const declared = [meta.returns, ...meta.responses];
  for (const response of declared) {
    const schema = response?.schema;
    if (schema === undefined || schema.kind === "stream" || byStatus.has(response!.status)) {
      continue;
    }
    byStatus.set(response!.status, entry(schema));
  }
  if (byStatus.size === 0) return undefined;
  return (result, ctx) => {
    if (result === undefined || result === null) return;
    if (result instanceof HttpResponse || result instanceof Response) return;
    const check = byStatus.get(ctx.statusCode);
    if (check === undefined) return;
    let value: unknown = result;
    if (typeof result === "string" && !check.stringSchema) {
      const parsed = jsonOf(result);
      if (!parsed.ok) return;
      value = parsed.value;
    }
    const outcome = check.validate(value);
    if (outcome.ok) return;
    source.logger.warn(`[response-validation] ${ctx.path()} — ${joinMessages(outcome.errors)}`);
  };
}

// compileEndpoint() builds its checks through this part outside production
responseChecks.install(responseCheck);
