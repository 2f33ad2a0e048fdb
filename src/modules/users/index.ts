// The public surface of the users module: other modules, the composition root and the read models import only this.
export { cachedTokenSubjects } from './cache.ts';
export type { TokenSubject, TokenSubjects } from './cache.ts';
export { userCommands } from './commands.ts';
export type { CreateUserInput, CurrentPasswordGuard, UserCommands } from './commands.ts';
export { userDecider } from './decider.ts';
export type { ActiveUser, UserState } from './decider.ts';
export { errorStatuses } from './errors.ts';
export { USER_PERSONAL_FIELDS, emailReservation, userEvents, userStreamId } from './events.ts';
export type { RoleRef, UserCreated, UserDeleted, UserDisabled, UserEnabled, UserErased, UserEvent, UserProfileUpdated, UserPasswordChanged, UserRoleAssigned, UserRoleRemoved } from './events.ts';
export { isUserDeleted, loadUser, passwordChangesOf } from './load.ts';
export type { PasswordChange } from './load.ts';
export { PasswordHasher, assertPasswordPolicy } from './passwords.ts';
export { createdUserView, userQueries } from './queries.ts';
export type { UserDetail, UserQueries } from './queries.ts';
export { userReactions } from './reactions.ts';
export { registerUserRoutes } from './routes.ts';
export { emailSchema, nameSchema, passwordSchema, userDetailSchema, usernameSchema } from './schemas.ts';
