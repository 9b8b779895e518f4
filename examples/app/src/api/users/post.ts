import { endpoint } from "@fw/application";
import { NewUser, UserSchema } from "../../schemas.ts";
import { Users } from "../../store.ts";

/** POST /users: a validated JSON body; answers 201 with the created user. */
export default endpoint()
  .description("Creates a user; the email address must be new")
  .body(NewUser)
  .returns(201, "Created", UserSchema)
  .mayThrow("Conflict")
  .inject({ users: Users })
  .handle(async ({ users }, ctx) => users.add(await ctx.body()));
