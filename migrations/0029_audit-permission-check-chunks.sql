-- PERMISSION_CHECK entries, the service's highest-volume write, stored a chunk per row: the
-- permission-check writer turns each flushed batch into one row per (tenant, user, client IP, user
-- agent), the entries' own fields (id, createdAt, status, errorCode, errorMessage, metadata) kept
-- as one JSON array. A row costs PostgreSQL about what one audit_log row cost (heap tuple, three
-- index entries, WAL), so an entry costs a fraction of it: docs/decisions.md "PERMISSION_CHECK
-- entries in chunks". The listing expands chunks only when it includes PERMISSION_CHECK, merging
-- them with audit_log newest first (src/modules/audit/permission-check-listing.ts). Entries written
-- before this migration stay in audit_log, which the listing still reads.
create table audit_permission_checks (
  tenant_id        text not null,
  chunk_id         uuid not null,
  user_id          text,
  client_ip        text,
  user_agent       text,
  first_created_at timestamptz not null,
  last_created_at  timestamptz not null,
  entry_count      integer not null check (entry_count > 0),
  -- JSON: [[id, createdAt, status, errorCode, errorMessage, metadata], ...] (text: no parse on insert)
  entries          text not null,
  primary key (tenant_id, chunk_id),
  -- A listing's time bounds cut through at most the chunks of a minute on either side (the writer
  -- splits longer runs), so those bounds are index ranges, not scans of everything newer.
  constraint audit_permission_checks_span check (last_created_at - first_created_at <= interval '1 minute' and last_created_at >= first_created_at)
);
create index audit_permission_checks_by_time on audit_permission_checks (tenant_id, last_created_at desc, chunk_id desc)
  include (first_created_at, entry_count);
create index audit_permission_checks_by_user on audit_permission_checks (tenant_id, user_id, last_created_at desc, chunk_id desc)
  include (first_created_at, entry_count);

-- Append-only like audit_log (0012, 0017, 0023): DELETE and TRUNCATE always refused, UPDATE only by
-- the erasure writer and only of client_ip and user_agent (the entries hold no other personal field
-- of the acting user).
create trigger audit_permission_checks_append_only before delete on audit_permission_checks
  for each statement execute function audit_log_refuse_change();
create trigger audit_permission_checks_no_truncate before truncate on audit_permission_checks
  for each statement execute function audit_log_refuse_change();
create function audit_permission_checks_erasure_only() returns trigger language plpgsql as $$
begin
  if coalesce(current_setting('iam.audit_erasure', true), '') <> 'on' then
    raise exception 'audit_permission_checks is append-only (UPDATE refused)' using errcode = 'insufficient_privilege';
  end if;
  if (new.tenant_id, new.chunk_id, new.user_id, new.first_created_at, new.last_created_at, new.entry_count, new.entries)
     is distinct from
     (old.tenant_id, old.chunk_id, old.user_id, old.first_created_at, old.last_created_at, old.entry_count, old.entries) then
    raise exception 'audit_permission_checks erasure may change personal data only (client_ip, user_agent)' using errcode = 'insufficient_privilege';
  end if;
  return new;
end
$$;
create trigger audit_permission_checks_erasure_only before update on audit_permission_checks
  for each row execute function audit_permission_checks_erasure_only();

-- Entries written before this migration stay in audit_log, in no index by action (0027): listings
-- of action=PERMISSION_CHECK find them here instead of walking every other entry of the tenant.
-- No new row enters this index.
create index audit_log_checks_before_chunks on audit_log (tenant_id, created_at desc, id desc) include (user_id)
  where action = 'PERMISSION_CHECK';
