/**
 * Helpers of the dashboard's tests: open the page (and sign in), take screenshots (saved under
 * docs/ with `FW_DASHBOARD_SCREENSHOTS=1`), delete a test's Redis keys.
 *
 * @module
 */

import assert from "node:assert/strict";
import { openRedis } from "../events/_redis.ts";
import type { Browser, Page } from "./_cdp_browser.ts";

const SAVE = Deno.env.get("FW_DASHBOARD_SCREENSHOTS") === "1";

/** Takes a screenshot of the page (1280 x 800) and saves it under docs/ when asked. */
export async function shoot(page: Page, name: string): Promise<void> {
  const png = await page.screenshot();
  assert.deepEqual([...png.slice(1, 4)], [0x50, 0x4e, 0x47], "a PNG screenshot");
  if (SAVE) await Deno.writeFile(new URL(`../docs/dashboard-${name}.png`, import.meta.url), png);
}

/**
 * Opens the dashboard at 1280 x 800; with a token, signs in through its form. Waits for the live
 * stream.
 */
export async function openDashboard(
  browser: Browser,
  url: string,
  token?: string,
): Promise<Page> {
  const page = await browser.open(url);
  await page.connection.send("Emulation.setDeviceMetricsOverride", {
    width: 1280,
    height: 800,
    deviceScaleFactor: 1,
    mobile: false,
  }, page.sessionId);
  if (token === undefined) {
    await page.waitFor("document.getElementById('live').textContent === 'live'", "the stream");
    return page;
  }
  await page.waitFor("!document.getElementById('login').hidden", "the token form");
  await page.evaluate(`(() => {
    document.getElementById("token").value = ${JSON.stringify(token)};
    document.getElementById("login").requestSubmit();
  })()`);
  await page.waitFor("document.getElementById('live').textContent === 'live'", "the live stream");
  return page;
}

/** Deletes every Redis key under `prefix` (a test's own). */
export async function dropRedisPrefix(url: string, prefix: string): Promise<void> {
  const redis = await openRedis("test", { url });
  try {
    const script = "for _, k in ipairs(redis.call('KEYS', ARGV[1])) do redis.call('DEL', k) end";
    await redis.main.sendCommand(["EVAL", script, "0", `${prefix}*`]);
  } finally {
    await redis.close();
  }
}
