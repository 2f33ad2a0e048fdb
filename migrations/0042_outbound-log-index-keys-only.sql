-- The delivery log's index without its included columns (docs/performance.md, "Outbound delivery
-- (session 18, webhooks)"). Migration 0034 included tenant_id and feature so that the log's count
-- was answered from the index alone; since 0041 the count is a row of outbound_target_counts, and
-- the log's page reads every row it shows from the table anyway (`select *`), where the tenant and
-- feature conditions are checked. So each delivery's entry carried two text columns no read used:
-- about a fifth of the entry, written for every delivery.
drop index outbound_deliveries_by_target;
create index outbound_deliveries_by_target on outbound_deliveries (target_id, created_at, id);
