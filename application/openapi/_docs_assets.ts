/**
 * Reads the Swagger UI files of the docs page from the `swagger-ui-dist` npm package: the only
 * module that imports it, loaded by `_docs.ts` on the first request for one of the files.
 *
 * @module
 */

import getAbsoluteFSPath from "swagger-ui-dist/absolute-path.js";

/**
 * Reads one file of the package.
 *
 * @param file The file name (`swagger-ui-bundle.js`).
 * @returns Its bytes.
 * @throws {Error} When the file cannot be read (the message names the folder).
 */
export async function readSwaggerFile(file: string): Promise<Uint8Array<ArrayBuffer>> {
  const dir = getAbsoluteFSPath() as string;
  try {
    return await Deno.readFile(`${dir}/${file}`);
  } catch (error) {
    throw new Error(
      `api(): "openapi.docs" cannot read the Swagger UI file "${file}" in "${dir}": ${
        (error as Error).message
      }`,
      { cause: error },
    );
  }
}
