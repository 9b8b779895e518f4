/**
 * The shop's settings, read from environment variables once at start-up. A missing or weak
 * secret fails start-up with a message naming the variable.
 *
 * | variable            | meaning                                                          |
 * | ------------------- | ---------------------------------------------------------------- |
 * | `PORT`              | HTTP port (default 8000)                                         |
 * | `SHOP_KV_PATH`      | Deno KV database file, or `:memory:`; unset: the default database |
 * | `SHOP_JWT_SECRET`   | HS256 secret of admin tokens (at least 32 characters; required)  |
 * | `SHOP_JWT_ISSUER`   | expected `iss` of admin tokens (default `shop-dev`)               |
 * | `SHOP_JWT_AUDIENCE` | expected `aud` of admin tokens (default `shop-api`)               |
 * | `SHOP_REPORT_CRON`  | when the stock report runs (default `*\/15 * * * *`)              |
 *
 * @module
 */

/** The shop's settings. */
export interface ShopConfig {
  /** HTTP port (0 picks a free one). */
  port: number;
  /** Deno KV database: a file, `":memory:"`, or undefined for the default database. */
  kvPath?: string;
  /** Redis URL: events go over Redis Streams instead of Deno KV when set (`SHOP_REDIS_URL`). */
  redisUrl?: string;
  /** Key prefix in Redis (default `shop:`). */
  redisPrefix?: string;
  /** HS256 secret that signs admin tokens. */
  jwtSecret: string;
  /** Expected token issuer. */
  jwtIssuer: string;
  /** Expected token audience. */
  jwtAudience: string;
  /** When the stock report runs: a cron expression (default every 15 minutes). */
  reportCron: string;
}

/** The scope admin routes require. */
export const ADMIN_SCOPE = "shop:admin";

/** Reads the settings from environment variables, with `overrides` taking precedence. */
export function loadConfig(overrides: Partial<ShopConfig> = {}): ShopConfig {
  const env = (name: string) => Deno.env.get(name) || undefined;
  const jwtSecret = overrides.jwtSecret ?? env("SHOP_JWT_SECRET");
  if (jwtSecret === undefined) {
    throw new Error(
      "Missing SHOP_JWT_SECRET: set it to a random string of at least 32 characters " +
        "(`deno task dev:shop` sets a development one)",
    );
  }
  if (jwtSecret.length < 32) {
    throw new Error(
      `Invalid SHOP_JWT_SECRET: expected at least 32 characters, got ${jwtSecret.length}`,
    );
  }
  const port = overrides.port ?? Number(env("PORT") ?? 8000);
  if (!Number.isInteger(port) || port < 0 || port > 65535) {
    throw new Error(`Invalid PORT "${env("PORT")}": expected a port number`);
  }
  const kvPath = "kvPath" in overrides ? overrides.kvPath : env("SHOP_KV_PATH");
  const redisUrl = "redisUrl" in overrides ? overrides.redisUrl : env("SHOP_REDIS_URL");
  return {
    port,
    ...(kvPath !== undefined ? { kvPath } : {}),
    ...(redisUrl !== undefined ? { redisUrl } : {}),
    ...(overrides.redisPrefix !== undefined ? { redisPrefix: overrides.redisPrefix } : {}),
    jwtSecret,
    jwtIssuer: overrides.jwtIssuer ?? env("SHOP_JWT_ISSUER") ?? "shop-dev",
    jwtAudience: overrides.jwtAudience ?? env("SHOP_JWT_AUDIENCE") ?? "shop-api",
    reportCron: overrides.reportCron ?? env("SHOP_REPORT_CRON") ?? "*/15 * * * *",
  };
}
