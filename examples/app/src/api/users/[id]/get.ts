import { Desc, endpoint, Int, NotFoundException } from "@fw/application";
import { UserSchema } from "../../../schemas.ts";
import { Users } from "../../../store.ts";

/** GET /users/:id: a typed path parameter; unknown ids answer 404. */
export default endpoint()
  .description("Reads one user")
  .params({ id: Desc("The user id", Int) })
  .returns(UserSchema)
  .mayThrow("NotFound")
  .inject({ users: Users })
  .handle(({ users }, ctx) => {
    const user = users.users.get(ctx.params.id);
    if (!user) throw new NotFoundException(`User ${ctx.params.id} not found`);
    return user;
  });
