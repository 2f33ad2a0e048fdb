-- The expiry sweep records SessionExpired; expired_at marks those sessions in the read model, and
-- the partial index finds the ones still due, across tenants, without scanning ended sessions.
alter table sessions add column expired_at timestamptz;
create index sessions_due on sessions ((least(expires_at, idle_expires_at))) where not revoked and expired_at is null;
