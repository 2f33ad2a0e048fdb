-- The outbound queue writes less per delivery (docs/performance.md, "Webhooks (session 10)").
--
-- Leases off the indexes: a claim sets leased_until, a column no index holds, so the claim is a HOT
-- update (no new index entry) where it used to move next_attempt_at through every index. A row is
-- held by a worker while leased_until is in the future; in_flight said the same thing.
alter table outbound_deliveries add column leased_until timestamptz;
update outbound_deliveries set leased_until = next_attempt_at where in_flight;
alter table outbound_deliveries drop column in_flight;
-- Room on each page for that update to stay on the page (HOT needs it).
alter table outbound_deliveries set (fillfactor = 90);

-- A delivery's id is derived from (feature, target, event) (src/platform/outbound/queue.ts), so the
-- primary key alone keeps an event to one delivery per target: one index entry fewer per row.
drop index outbound_deliveries_once;

-- A delivery of a target whose circuit is open waits without an attempt: next_attempt_at is
-- 'infinity' (held). Held rows are not in the claim's index, only in the target's waiting rows, which
-- are ordered so that a recovered target's held rows are one range.
drop index outbound_deliveries_due;
create index outbound_deliveries_due on outbound_deliveries (feature, next_attempt_at) where next_attempt_at < 'infinity';
drop index outbound_deliveries_waiting_by_target;
create index outbound_deliveries_waiting_by_target on outbound_deliveries (feature, target_id, next_attempt_at) where next_attempt_at is not null;

-- The circuit of a target: open while failing_since is set; then one held delivery is attempted as a
-- probe when probe_at comes. recovered_at: the target answered again and may still have held
-- deliveries, which claims take (without rewriting them first) until none is left.
alter table outbound_targets add column probe_at timestamptz, add column recovered_at timestamptz;
