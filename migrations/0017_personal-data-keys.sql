-- Crypto-shredding (docs/erasure.md). One data key per data subject (a person, named by their
-- aggregate's stream id), wrapped by the master key; the personal fields of that person's events
-- are encrypted with it. Erasure sets wrapped_key to null and keeps the row as a tombstone, so
-- the subject reads "[ERASED]" for ever, even for events written before encryption existed.
create table personal_data_keys (
  tenant_id   text not null,
  subject     text not null,
  wrapped_key text,
  created_at  timestamptz not null default now(),
  erased_at   timestamptz,
  primary key (tenant_id, subject),
  check ((wrapped_key is null) = (erased_at is not null))
);

-- The audit log stays append-only, with one narrow exception that spec/decisions.md allows:
-- erasure rewrites the personal fields of a person's entries. An UPDATE passes only inside a
-- transaction that declared itself the erasure writer (set_config('iam.audit_erasure', 'on',
-- true)), and only when it changes nothing but metadata. DELETE and TRUNCATE are always refused.
drop trigger audit_log_append_only on audit_log;
create trigger audit_log_append_only before delete on audit_log
  for each statement execute function audit_log_refuse_change();

create function audit_log_erasure_only() returns trigger language plpgsql as $$
begin
  if coalesce(current_setting('iam.audit_erasure', true), '') <> 'on' then
    raise exception 'audit_log is append-only (UPDATE refused)' using errcode = 'insufficient_privilege';
  end if;
  if (new.tenant_id, new.id, new.action, new.user_id, new.resource, new.resource_id, new.status, new.error_code,
      new.error_message, new.client_ip, new.user_agent, new.created_at)
     is distinct from
     (old.tenant_id, old.id, old.action, old.user_id, old.resource, old.resource_id, old.status, old.error_code,
      old.error_message, old.client_ip, old.user_agent, old.created_at) then
    raise exception 'audit_log erasure may change metadata only' using errcode = 'insufficient_privilege';
  end if;
  return new;
end
$$;
create trigger audit_log_erasure_only before update on audit_log
  for each row execute function audit_log_erasure_only();

-- The erasure writer finds a person's entries (resource user, resource_id the user's id).
create index audit_log_user_resource on audit_log (tenant_id, resource_id) where resource = 'user';
