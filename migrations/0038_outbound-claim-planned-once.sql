-- The outbound queue's claim (src/platform/outbound/queue.ts claimDue), planned once per connection
-- instead of at every call. Every worker of every instance runs it several times a second whatever
-- the load (an idle queue too), and its plan -- five CTEs over outbound_deliveries and
-- outbound_targets -- took 1.2 to 1.4 ms of PostgreSQL at each call against well under that to run.
-- A named statement would risk 0028's trap: the queue grows to millions of held rows in a receiver
-- outage, and a plan cached while it was small would seq-scan it. As PL/pgSQL with 0028's rules
-- (force_generic_plan, no sequential scans) the statement is planned once per connection and always
-- through the indexes: the due rows through outbound_deliveries_due (next_attempt_at < 'infinity'),
-- the held ones per target through outbound_deliveries_waiting_by_target, the targets by key. The
-- statement, its inputs and its answer are claimDue's as they were.
create function outbound_claim_due(p_feature text, p_now timestamptz, p_leased_until timestamptz, p_limit int, p_probe_at timestamptz)
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
     returning d.id, d.tenant_id, d.target_id, d.event_id, d.event_type, d.payload, d.attempts;
end
$$;
