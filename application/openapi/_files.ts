/**
 * Finds the OpenAPI documents an entry file configures, for `generate` and `openapi`: imports the
 * entry, takes every exported application, warms it up (routes load, nothing listens) and asks
 * each `api({ openapi })` plugin, inside modules too, for its document.
 *
 * @module
 */

import type { Plugin } from "@fw/runtime";
import type { OpenApiDocument } from "./types.ts";
// the generator: api() loads it at warmup only outside production (NODE_ENV may say production)
import "./document.ts";

/** One document to write. */
export interface OpenApiFile {
  /** File name in `.gen/`: `openapi.json`, or `openapi-v1.json` for an api under `/v1`. */
  readonly name: string;
  /** The plugin's prefix. */
  readonly prefix: string;
  /** The document. */
  readonly document: OpenApiDocument;
}

interface AppLike {
  warmup(): Promise<void>;
  readonly plugins: readonly Plugin[];
}

interface ApiLike extends Plugin {
  readonly options: { readonly openapi?: unknown };
  readonly prefix: string;
  openapi(): OpenApiDocument;
}

function isApp(value: unknown): value is AppLike {
  return typeof value === "object" && value !== null &&
    typeof (value as AppLike).warmup === "function" &&
    Array.isArray((value as AppLike).plugins);
}

function isConfiguredApi(plugin: Plugin): plugin is ApiLike {
  const p = plugin as Partial<ApiLike>;
  return plugin.name === "api" && typeof p.openapi === "function" &&
    p.options?.openapi !== undefined;
}

function* apis(plugins: readonly Plugin[]): Generator<ApiLike> {
  for (const p of plugins) {
    if (isConfiguredApi(p)) yield p;
    const children = (p as { plugins?: unknown }).plugins;
    if (Array.isArray(children)) yield* apis(children);
  }
}

/**
 * The documents of the applications an entry file exports.
 *
 * @param entry `file:` URL of the entry file.
 * @returns One file per `api({ openapi })` plugin, in `use()` order.
 * @throws {Error} When the entry cannot be imported or warmed up, or when two plugins would
 *   write the same file.
 */
export async function openApiFiles(entry: string): Promise<OpenApiFile[]> {
  let mod: Record<string, unknown>;
  try {
    mod = await import(entry);
  } catch (error) {
    throw new Error(
      `Cannot import "${entry}" to read its api({ openapi }) settings: ${(error as Error).message}`,
      { cause: error },
    );
  }
  const apps = [...new Set(Object.values(mod).filter(isApp))];
  const files: OpenApiFile[] = [];
  for (const app of apps) {
    await app.warmup();
    for (const plugin of apis(app.plugins)) {
      const prefix = plugin.prefix;
      const slug = prefix.replace(/[^A-Za-z0-9]+/g, "-").replace(/^-|-$/g, "");
      const name = slug ? `openapi-${slug}.json` : "openapi.json";
      if (files.some((f) => f.name === name)) {
        throw new Error(
          `Two api({ openapi }) plugins would write .gen/${name}: give them different prefixes`,
        );
      }
      files.push({ name, prefix, document: plugin.openapi() });
    }
  }
  return files;
}
