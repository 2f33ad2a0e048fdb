-- The audit log (projections/audit.ts and the permission-check writer). Append-only in PostgreSQL
-- itself: statement triggers refuse UPDATE, DELETE and TRUNCATE, so neither a bug nor a projection
-- rebuild can rewrite history (the audit projection replays with insert ... on conflict do nothing).
create table audit_log (
  tenant_id     text not null,
  -- the event's id for projected entries; a fresh UUIDv7 for permission checks
  id            uuid not null,
  action        text not null,
  user_id       text,
  resource      text,
  resource_id   text,
  status        text not null,
  error_code    text,
  error_message text,
  client_ip     text,
  user_agent    text,
  metadata      jsonb,
  created_at    timestamptz not null,
  primary key (tenant_id, id)
);

-- Newest first, any filter: action and user_id included so counts with excludeActions or userId
-- stay index-only scans.
create index audit_log_by_time on audit_log (tenant_id, created_at desc, id desc) include (action, user_id);
-- The default listing leaves PERMISSION_CHECK out; those may be most rows, so the default walks
-- an index that never held them.
create index audit_log_by_time_no_checks on audit_log (tenant_id, created_at desc, id desc) include (user_id)
  where action <> 'PERMISSION_CHECK';
create index audit_log_by_action on audit_log (tenant_id, action, created_at desc, id desc);
create index audit_log_by_user on audit_log (tenant_id, user_id, created_at desc, id desc) include (action);

create function audit_log_refuse_change() returns trigger language plpgsql as $$
begin
  raise exception 'audit_log is append-only (% refused)', tg_op using errcode = 'insufficient_privilege';
end
$$;
create trigger audit_log_append_only before update or delete on audit_log
  for each statement execute function audit_log_refuse_change();
create trigger audit_log_no_truncate before truncate on audit_log
  for each statement execute function audit_log_refuse_change();

-- The audit projection's working state: each resource's latest summary, the next entry's
-- metadata.before. Derived from events only, so a rebuild empties and refills it.
create table audit_resource_summaries (
  tenant_id   text not null,
  resource    text not null,
  resource_id text not null,
  summary     jsonb not null,
  primary key (tenant_id, resource, resource_id)
);
