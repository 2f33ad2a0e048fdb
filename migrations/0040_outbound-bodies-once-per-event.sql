-- A delivery's body stored once per event rather than in every delivery's row (docs/performance.md,
-- "Webhooks (session 15, webhooks)"). An event fanned out to ten targets wrote its body ten times
-- (heap and WAL); a receiver outage's held rows were mostly bodies.
--
-- Only a delivery that may be attempted again needs its body: one waiting (pending, retrying, held)
-- and one that failed or was cancelled (an administrator may retry it). A delivered one never sends
-- it again, and the delivery log shows status, answer, attempts and times, not the body; so the
-- consumer's delivered rows (insertDelivered) store none, and a delivery recorded delivered drops
-- its reference (body_id null), the body itself deleted once no delivery refers to it.
create table outbound_bodies (
  -- The id of the first of the event's deliveries that carried this body (queue.ts enqueue).
  id      uuid primary key,
  -- The body exactly as sent: every attempt repeats it.
  payload text not null
);

alter table outbound_deliveries add column body_id uuid;
insert into outbound_bodies (id, payload)
  select distinct md5(feature || E'\n' || event_id || E'\n' || payload)::uuid, payload
    from outbound_deliveries where status <> 'delivered'
  on conflict (id) do nothing;
update outbound_deliveries set body_id = md5(feature || E'\n' || event_id || E'\n' || payload)::uuid where status <> 'delivered';
alter table outbound_deliveries drop column payload;
-- Whether a body is still referred to (recordDelivered): only rows that may be sent again are in it.
create index outbound_deliveries_by_body on outbound_deliveries (body_id) where body_id is not null;

-- The claim (0038) reads the body of each delivery it claims.
create or replace function outbound_claim_due(p_feature text, p_now timestamptz, p_leased_until timestamptz, p_limit int, p_probe_at timestamptz)
returns table (id uuid, tenant_id text, target_id text, event_id text, event_type text, payload text, attempts int)
language plpgsql
set plan_cache_mode = force_generic_plan
set enable_seqscan = off
as $$
begin
  return query
    with due as (
      select d.id from outbound_deliveries d
       where d.feature = p_feature and d.next_attempt_at <= p_now and d.next_attempt_at < 'infinity'
         and (d.leased_until is null or d.leased_until <= p_now)
       order by d.next_attempt_at limit p_limit for update skip locked
    ), probed as (
      update outbound_targets t set probe_at = p_probe_at
       where t.feature = p_feature and t.failing_since is not null and coalesce(t.probe_at, '-infinity') <= p_now
       returning t.target_id, 1 as wanted
    ), recovered as (
      select t.target_id, p_limit as wanted from outbound_targets t
       where t.feature = p_feature and t.failing_since is null and t.recovered_at is not null
    ), held as (
      select h.id from (select * from probed union all select * from recovered) t
       cross join lateral (
         select d.id from outbound_deliveries d
          where d.feature = p_feature and d.target_id = t.target_id and d.next_attempt_at = 'infinity'
            and (d.leased_until is null or d.leased_until <= p_now)
          limit t.wanted for update skip locked) h
       limit greatest(0, p_limit - (select count(*) from due))
    ), released as (
      -- A recovered target is looked at for held deliveries for a minute after none is left: an
      -- enqueue that read the circuit open just before it closed commits its held rows within it.
      update outbound_targets t set recovered_at = null
       where t.feature = p_feature and t.failing_since is null and t.recovered_at < p_now - interval '1 minute'
         and not exists (select from outbound_deliveries d where d.feature = p_feature and d.target_id = t.target_id and d.next_attempt_at = 'infinity')
    )
    update outbound_deliveries d set leased_until = p_leased_until, updated_at = p_now
     where d.id = any(array(select due.id from due union all select held.id from held))
     returning d.id, d.tenant_id, d.target_id, d.event_id, d.event_type,
               (select b.payload from outbound_bodies b where b.id = d.body_id), d.attempts;
end
$$;
