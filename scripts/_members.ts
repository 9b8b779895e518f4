/**
 * Reads the workspace members and their export entries (shared by the gate scripts).
 *
 * @module
 */

/** One workspace member's configuration. */
export interface Member {
  /** Folder relative to the repository root, without `./`. */
  dir: string;
  /** The parsed `deno.json`. */
  config: {
    name?: string;
    version?: string;
    license?: string;
    exports?: string | Record<string, string>;
  };
}

const root = new URL("../", import.meta.url);

/** Lists the workspace members named by the root `deno.json`. */
export async function members(): Promise<Member[]> {
  const rootConfig = JSON.parse(await Deno.readTextFile(new URL("deno.json", root)));
  const out: Member[] = [];
  for (const m of rootConfig.workspace as string[]) {
    const dir = m.replace(/^\.\//, "").replace(/\/$/, "");
    const config = JSON.parse(await Deno.readTextFile(new URL(`${dir}/deno.json`, root)));
    out.push({ dir, config });
  }
  return out;
}

/** Every exports entry of every member, as paths relative to the root. */
export async function exportEntries(): Promise<string[]> {
  const out: string[] = [];
  for (const { dir, config } of await members()) {
    const exp = config.exports;
    const files = typeof exp === "string" ? [exp] : Object.values(exp ?? {});
    for (const f of files) out.push(`${dir}/${f.replace(/^\.\//, "")}`);
  }
  return out;
}
