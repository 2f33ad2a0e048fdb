-- PERMISSION_CHECK rows are the service's highest-volume write, and every index a row enters costs
-- its insert (btree descent, WAL). audit_log_by_action served `action = X` listings for every
-- action; for PERMISSION_CHECK it is redundant: audit_log_by_time already holds action (include),
-- so `action=PERMISSION_CHECK` walks the time index newest first and keeps the matching entries
-- (checks are most of a tenant's entries wherever they are recorded). The index now leaves checks
-- out, like audit_log_by_time_no_checks; a listing of another action still matches it, since its
-- condition `action = 'LOGIN'` implies `action <> 'PERMISSION_CHECK'`. A check row is now in three
-- indexes: the primary key, audit_log_by_time and audit_log_by_user (userId listings and erasure).
drop index audit_log_by_action;
create index audit_log_by_action on audit_log (tenant_id, action, created_at desc, id desc)
  where action <> 'PERMISSION_CHECK';
