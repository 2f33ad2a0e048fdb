/** Documents in folders, shared with groups, with a wildcard and an exclusion. */
export const MODEL = `model
  schema 1.1
type user
type group
  relations
    define member: [user, group#member]
type folder
  relations
    define viewer: [user, group#member]
type document
  relations
    define parent: [folder]
    define owner: [user]
    define blocked: [user]
    define viewer: [user, user:*, group#member] or owner or viewer from parent
    define can_read: viewer but not blocked`;

// The same types without wildcards, and with an editor relation.
export const NEXT_MODEL = MODEL.replace('[user, user:*, group#member] or owner', '[user, group#member] or owner or editor').replace(
  '    define owner: [user]',
  '    define owner: [user]\n    define editor: [user]',
);
