/**
 * Schemas shared by the example routes.
 *
 * @module
 */

import { ArrayOf, Desc, Email, Int, MaxLength, MinLength, schema } from "@fw/application";

/** A user as returned by the API. */
export const UserSchema = schema("User", {
  id: Desc("User id", Int),
  name: MinLength(1),
  email: Email,
  tags: ArrayOf(String),
});

/** The body of `POST /users`. */
export const NewUser = schema("NewUser", {
  name: MaxLength(50, MinLength(1)),
  email: Email,
  tags: ArrayOf(MaxLength(20)),
});
