/**
 * YAML output of content negotiation: the only module that imports `yaml`.
 *
 * @module
 */

import { stringify } from "yaml";

/**
 * Writes a JSON value (already normalised by `JSON.parse(JSON.stringify(v))`) as a YAML document.
 *
 * @param value The value.
 * @returns The YAML text, ending with a newline.
 */
export function toYaml(value: unknown): string {
  return stringify(value, { aliasDuplicateObjects: false });
}
