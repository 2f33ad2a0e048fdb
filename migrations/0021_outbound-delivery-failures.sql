-- Deactivation counts failed DELIVERIES (a delivery fails once its retry schedule is exhausted),
-- not failed attempts (decisions.md, Webhooks): outbound_targets.consecutive_failures keeps its name
-- and now counts those. A target that failed an attempt since its last success has failing_since
-- set: its next success makes its waiting retries due at once (the backlog drains on recovery).
alter table outbound_targets add column failing_since timestamptz;

-- A claimed delivery whose attempt is in flight: a recovery does not make it due again (that would
-- send it twice), a cancellation leaves it to the worker that holds it.
alter table outbound_deliveries add column in_flight boolean not null default false;

-- The deliveries still waiting, per target: the recovery and the cancellation of one target touch
-- only these, never its delivered history.
create index outbound_deliveries_waiting_by_target on outbound_deliveries (feature, target_id) where next_attempt_at is not null;
