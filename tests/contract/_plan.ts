/**
 * Turns a live OpenAPI document into a Portman configuration: for every operation, a contract
 * test of its documented success response (status, content type, JSON body, schema, required
 * headers), and variations that each break one documented rule and expect the documented 4xx
 * with its documented body: Portman's fuzzing of the body and query (required fields, minimum,
 * maximum, minLength, maxLength), plus a body, path or query value that breaks its type,
 * integer rule or pattern (the formats' patterns included), a body over the documented limit (413),
 * a body sent as `text/plain` (415), an `Accept` nothing matches (406), no token (401),
 * a token without the scope (403), and a stream route asked for neither SSE nor WebSocket (400).
 *
 * @module
 */

type Json = Record<string, unknown>;

/** What a document says of one operation, as far as the plan needs it. */
interface Operation {
  parameters?: { name: string; in: string; schema: Json }[];
  requestBody?: unknown;
  responses: Record<
    string,
    { description?: string; content?: Record<string, unknown>; headers?: Json }
  >;
  "x-fw-stream"?: unknown;
}

/** What one example adds to the plan. */
export interface PlanOptions {
  /**
   * Operations (`GET::/feed`) whose success request cannot run in newman, with the reason: the
   * request stays out of the collection, its variations stay in.
   */
  readonly skipSuccess?: Readonly<Record<string, string>>;
  /** Portman `overwrites` (ids that must exist first, from `assignVariables`). */
  readonly overwrites?: readonly Json[];
  /** Portman `assignVariables`. */
  readonly assignVariables?: readonly Json[];
  /** Folders to run first (the ones whose responses seed variables). */
  readonly orderOfFolders?: readonly string[];
  /** Bearer tokens for `security` routes: a valid one and one without the required scope. */
  readonly tokens?: { readonly valid: string; readonly weak: string };
}

/** The plan: the Portman configuration, and what it cannot exercise. */
export interface Plan {
  /** The Portman configuration (`portman-config.json`). */
  readonly config: Json;
  /** `METHOD::/path` of every operation whose success request runs. */
  readonly successes: string[];
  /** `METHOD::/path` of operations with no rule a request can break, with the reason. */
  readonly unbreakable: Record<string, string>;
}

const CANDIDATES = ["!", "~x~", "0", "zz", "A", "-", "a.b"];

/** A value that breaks `schema` as a path or query string, or undefined when none can. */
export function breaking(schema: Json): string | undefined {
  if (schema.type === "integer") return "1.5";
  if (schema.type === "number") return "abc";
  if (schema.type === "boolean") return "maybe";
  if (schema.type !== "string") return undefined;
  const rules = [
    schema.pattern,
    ...((schema.allOf as Json[] | undefined) ?? []).map((s) => s.pattern),
  ]
    .filter((p): p is string => typeof p === "string").map((p) => new RegExp(p));
  const min = typeof schema.minLength === "number" ? schema.minLength : 0;
  const max = typeof schema.maxLength === "number" ? schema.maxLength : Infinity;
  if (rules.length > 0) {
    return CANDIDATES.find((c) =>
      c.length >= min && c.length <= max && !rules.every((r) => r.test(c))
    );
  }
  if (max < Infinity) return "x".repeat(max + 1);
  return undefined;
}

/** A JSON value that breaks the type, integer or pattern rule of `schema`, if it has one. */
function breakingJson(schema: Json): unknown {
  if (schema.type === "integer") return 1.5;
  if (schema.type === "number") return "abc";
  if (schema.type === "boolean") return "true";
  if (schema.type === "string" && (schema.pattern || schema.allOf)) return breaking(schema);
  return undefined;
}

/** Every property of a body schema (`$ref`s resolved, first array item), with its schema. */
function* bodyFields(schema: Json, components: Json, path: string): Generator<[string, Json]> {
  if (typeof schema.$ref === "string") {
    schema = components[schema.$ref.slice("#/components/schemas/".length)] as Json;
  }
  if (path) yield [path, schema];
  if (schema.type === "array") yield* bodyFields(schema.items as Json, components, `${path}[0]`);
  for (const [key, prop] of Object.entries((schema.properties ?? {}) as Record<string, Json>)) {
    yield* bodyFields(prop, components, path ? `${path}.${key}` : key);
  }
}

const CHECKS = (status: string, headers: boolean): Json[] => [
  { statusCode: { enabled: true, code: Number(status) } },
  { contentType: { enabled: true } },
  { jsonBody: { enabled: true } },
  { schemaValidation: { enabled: true } },
  ...(headers ? [{ headersPresent: { enabled: true } }] : []),
];

function variation(
  target: string,
  status: string,
  name: string,
  change: Json,
): Json {
  return {
    openApiOperation: target,
    openApiResponse: status,
    variations: [{
      name,
      ...change,
      tests: { contractTests: CHECKS(status, true) },
    }],
  };
}

const FUZZ = {
  requiredFields: { enabled: true },
  minimumNumberFields: { enabled: true },
  maximumNumberFields: { enabled: true },
  minLengthFields: { enabled: true },
  maxLengthFields: { enabled: true },
};

function ruleBreakers(
  target: string,
  op: Operation,
  components: Json,
  options: PlanOptions,
): Json[] {
  const out: Json[] = [];
  const json = (op.requestBody as { content?: Record<string, { schema: Json }> } | undefined)
    ?.content?.["application/json"]?.schema;
  for (const [path, schema] of json ? bodyFields(json, components, "") : []) {
    const value = breakingJson(schema);
    if (value === undefined) continue;
    out.push(variation(target, "400", `Invalid body ${path}`, {
      overwrites: [{ overwriteRequestBody: [{ key: path, value, overwrite: true }] }],
    }));
  }
  const has = (status: string) => op.responses[status] !== undefined;
  const params = op.parameters ?? [];
  for (const p of params) {
    const bad = breaking(p.schema);
    if (bad === undefined) continue;
    const change = p.in === "path"
      ? {
        overwriteRequestPathVariables: [{
          key: p.name,
          value: encodeURIComponent(bad),
        }],
      }
      : {
        overwriteRequestQueryParams: [{
          key: p.name,
          value: bad,
          overwrite: true,
        }],
      };
    out.push(
      variation(target, "400", `Invalid ${p.in} ${p.name}`, {
        overwrites: [change],
      }),
    );
  }
  const fuzz: Json = {};
  if (op.requestBody) fuzz.requestBody = [FUZZ];
  if (params.some((p) => p.in === "query")) fuzz.requestQueryParams = [FUZZ];
  if (Object.keys(fuzz).length > 0) {
    out.push(variation(target, "400", "Fuzzed", { fuzzing: [fuzz] }));
  }
  const header = (key: string, value: string) => ({
    overwrites: [{
      overwriteRequestHeaders: [{ key, value, overwrite: true }],
    }],
  });
  const limit = /exceeds (\d+) bytes/.exec(
    op.responses["413"]?.description ?? "",
  );
  if (op.requestBody && limit) {
    const pad = "x".repeat(Number(limit[1]) + 1);
    out.push(variation(target, "413", "Body over the limit", {
      overwrites: [{ overwriteRequestBody: [{ key: "pad", value: pad, overwrite: true }] }],
    }));
  }
  if (op.requestBody && has("415")) {
    out.push(
      variation(
        target,
        "415",
        "Body not JSON",
        header("Content-Type", "text/plain"),
      ),
    );
  }
  const success = Object.keys(op.responses).find((s) => s < "4");
  const negotiated = success !== undefined &&
    op.responses[success].content?.["application/xml"] !== undefined;
  if (negotiated && has("406")) {
    out.push(
      variation(
        target,
        "406",
        "Nothing acceptable",
        header("Accept", "application/pdf"),
      ),
    );
  }
  if (op["x-fw-stream"] !== undefined && has("400")) {
    out.push(
      variation(
        target,
        "400",
        "Neither SSE nor WebSocket",
        header("Accept", "text/plain"),
      ),
    );
  }
  if (has("401")) {
    out.push(variation(target, "401", "No token", {
      overwrites: [{ overwriteRequestSecurity: { remove: true } }],
    }));
  }
  if (has("403") && options.tokens) {
    out.push(variation(target, "403", "Token without the scope", {
      overwrites: [{
        overwriteRequestSecurity: { bearer: { token: options.tokens.weak } },
      }],
    }));
  }
  return out;
}

/**
 * Builds the Portman configuration of a document.
 *
 * @param document The live OpenAPI document.
 * @param options What the example adds.
 * @returns The plan.
 */
export function plan(document: Json, options: PlanOptions = {}): Plan {
  const contractTests: Json[] = [];
  const variationTests: Json[] = [];
  const successes: string[] = [];
  const unbreakable: Record<string, string> = {};
  const paths = document.paths as Record<string, Record<string, Operation>>;
  for (const [path, methods] of Object.entries(paths)) {
    for (const [method, op] of Object.entries(methods)) {
      const target = `${method.toUpperCase()}::${path}`;
      const success = Object.keys(op.responses).filter((s) => s < "4" && s !== "101")[0];
      if (success !== undefined && !options.skipSuccess?.[target]) {
        successes.push(target);
        contractTests.push({
          openApiOperation: target,
          openApiResponse: success,
          ...Object.assign({}, ...CHECKS(success, true)),
        });
      }
      const components = (document.components as Json | undefined)?.schemas as Json ?? {};
      const breakers = ruleBreakers(target, op, components, options);
      if (breakers.length === 0) {
        unbreakable[target] = "it documents no rule a request can break";
      }
      variationTests.push(...breakers);
    }
  }
  const globals: Json = {
    ...(options.orderOfFolders && { orderOfFolders: options.orderOfFolders }),
    // the operations' bearer auth reads {{bearerToken}}
    ...(options.tokens &&
      { collectionVariables: { bearerToken: options.tokens.valid } }),
  };
  return {
    config: {
      version: 1.0,
      tests: { contractTests, variationTests },
      overwrites: options.overwrites ?? [],
      assignVariables: options.assignVariables ?? [],
      globals,
    },
    successes,
    unbreakable,
  };
}
