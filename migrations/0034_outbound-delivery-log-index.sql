-- The delivery log's index (a target's deliveries newest first: listForTarget, targetStats), written
-- for every delivery, keyed by the target alone (docs/performance.md, "Webhooks (session 12,
-- webhooks)"). Its key was (tenant_id, feature, target_id, created_at desc, id desc): every insert's
-- descent compared two text columns that are the same for all of a tenant's deliveries before it
-- reached the target's, about a sixth of PostgreSQL's CPU for a delivered row. A target id names one
-- subscription or log stream (a UUID), so it leads alone; tenant_id and feature stay in the entries
-- as included columns, so the queries' tenant and feature conditions, and the log's count, are still
-- answered from the index. The listing reads it backwards (newest first).
drop index outbound_deliveries_by_target;
create index outbound_deliveries_by_target on outbound_deliveries (target_id, created_at, id) include (tenant_id, feature);
