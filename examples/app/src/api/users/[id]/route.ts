import { endpoint, Int, NotFoundException } from "@fw/application";
import { NewUser, UserSchema } from "../../../schemas.ts";
import { Users } from "../../../store.ts";

/** PUT /users/:id: replaces a user. */
export const PUT = endpoint()
  .description("Replaces a user")
  .params({ id: Int })
  .body(NewUser)
  .returns(UserSchema)
  .mayThrow("NotFound")
  .inject({ users: Users })
  .handle(async ({ users }, ctx) => {
    if (!users.users.has(ctx.params.id)) {
      throw new NotFoundException(`User ${ctx.params.id} not found`);
    }
    const user = { id: ctx.params.id, ...(await ctx.body()) };
    users.users.set(user.id, user);
    return user;
  });

/** DELETE /users/:id: returning nothing answers 204. */
export const DELETE = endpoint()
  .description("Deletes a user; deleting an unknown id is not an error")
  .params({ id: Int })
  .returns(204, "Deleted")
  .inject({ users: Users })
  .handle(({ users }, ctx) => {
    users.users.delete(ctx.params.id);
  });
