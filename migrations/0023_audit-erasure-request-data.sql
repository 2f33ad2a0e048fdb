-- Erasure also forgets a person's request metadata (client_ip, user_agent: docs/erasure.md), so
-- the erasure writer may change those columns too; every other column still refuses any change.
create or replace function audit_log_erasure_only() returns trigger language plpgsql as $$
begin
  if coalesce(current_setting('iam.audit_erasure', true), '') <> 'on' then
    raise exception 'audit_log is append-only (UPDATE refused)' using errcode = 'insufficient_privilege';
  end if;
  if (new.tenant_id, new.id, new.action, new.user_id, new.resource, new.resource_id, new.status, new.error_code,
      new.error_message, new.created_at)
     is distinct from
     (old.tenant_id, old.id, old.action, old.user_id, old.resource, old.resource_id, old.status, old.error_code,
      old.error_message, old.created_at) then
    raise exception 'audit_log erasure may change personal data only (metadata only, client_ip, user_agent)' using errcode = 'insufficient_privilege';
  end if;
  return new;
end
$$;
