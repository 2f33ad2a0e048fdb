-- The visibility bound of the global log counts appending transactions only. Until now a reader
-- saw positions below the oldest running transaction of the cluster (pg_snapshot_xmin), so any
-- transaction with an id (a projection batch between its first write and its commit, a reaction,
-- the outbound queue) held every reader back, although it can never write an event.
--
-- The rule: a transaction appends only if it registered as an appender (a shared two-key advisory
-- lock of the class 'even', held to its end) BEFORE it had a transaction id. Then, for a reader's
-- snapshot, a running transaction X of that snapshot can still write events only if its backend
-- holds the lock with X as its id; one that no longer runs may have written events the snapshot
-- does not see. So the bound is the lowest id of the snapshot that (read from pg_locks) an
-- appender holds, or that (read after it, from the commit log) has finished since the snapshot;
-- with none, the snapshot's xmax (the snapshot sees no id from it on, whatever runs there). A transaction running at the second
-- look and not holding the lock at the first never held it: it got its id before registering, and
-- the guard below refuses it any append. Every event that can still appear lies above the bound.

-- Registers this transaction as an appender: call it before the transaction writes anything.
create function events_register_appender() returns void
language plpgsql as $$
begin
  if pg_current_xact_id_if_assigned() is not null then
    raise exception 'events are appended by a transaction that writes nothing before it (see migration 0031)';
  end if;
  perform pg_advisory_xact_lock_shared(1702258030, 0); -- 'even'
  perform set_config('iam.events_appender', 'on', true);
end
$$;

-- No insert into events from a transaction that did not register first (readers would skip it).
create function events_refuse_unregistered() returns trigger
language plpgsql as $$
begin
  if current_setting('iam.events_appender', true) is distinct from 'on' then
    raise exception 'insert into events from a transaction not registered by events_register_appender()';
  end if;
  return null;
end
$$;
create trigger events_appenders_only before insert on events
  for each statement execute function events_refuse_unregistered();

-- Stable: it sees the calling statement's snapshot (pg_current_snapshot), the one its rows come from.
create or replace function events_visible_bound() returns bigint
language plpgsql stable as $$
declare
  snapshot pg_snapshot := pg_current_snapshot();
  appending xid[];
  bound xid8;
begin
  -- Nothing running, or the oldest has finished since (it is the bound either way): no need to
  -- read the lock table (about 2.5 µs a lock held in the cluster).
  if pg_snapshot_xmin(snapshot) = pg_snapshot_xmax(snapshot) or pg_xact_status(pg_snapshot_xmin(snapshot)) is distinct from 'in progress' then
    return pg_snapshot_xmin(snapshot)::text::bigint << 20;
  end if;
  -- First the appenders' ids (one scan of the lock table), then the commit log: the order matters.
  appending := array(
    select s.transactionid from (
      select l.locktype, l.transactionid,
             bool_or(l.locktype = 'advisory' and l.classid = 1702258030 and l.objid = 0 and l.objsubid = 2) over (partition by l.pid) as appender
        from pg_locks l
       where l.granted and l.pid is not null
         and (l.locktype = 'advisory' or (l.locktype = 'transactionid' and l.mode = 'ExclusiveLock'))
    ) s
    where s.appender and s.locktype = 'transactionid');
  select min(x) into bound
    from pg_snapshot_xip(snapshot) x
   where xid(x) = any(appending) or pg_xact_status(x) is distinct from 'in progress';
  return coalesce(bound, pg_snapshot_xmax(snapshot))::text::bigint << 20;
end
$$;

-- events_append of migration 0028, registering first (before its stream locks and its id).
create or replace function events_append(
  members int[], streams text[], expected text[],
  event_entries int[], ids uuid[], types text[], datas jsonb[], metadatas jsonb[]
) returns table (out_entry int, out_outcome text, out_revision bigint, out_position bigint, out_conflicting uuid[])
language plpgsql
set plan_cache_mode = force_generic_plan
set enable_seqscan = off
as $$
declare
  heads bigint[];
  -- Members with a failing expectation: they write nothing.
  refused int[];
  -- xid8 << 20, taken only after every stream lock is held (see docs/architecture.md).
  base bigint;
begin
  perform events_register_appender();
  if exists (select 1 from events e where e.event_id = any(ids))
     or (cardinality(streams) > 1 and exists (select 1 from unnest(streams) s group by s having count(*) > 1)) then
    return query select * from events_append_by_member(members, streams, expected, event_entries, ids, types, datas, metadatas);
    return;
  end if;

  -- One statement, keys in ascending order (the outer select runs over the sorted subquery), so
  -- two appends sharing streams never wait for each other crosswise.
  perform pg_advisory_xact_lock(l.key)
     from (select distinct hashtextextended(x.stream_id, 0) as key from unnest(streams) x(stream_id) order by 1) l;

  heads := array(
    select coalesce((select max(e.revision) from events e where e.stream_id = s.stream_id), -1)
      from unnest(streams) with ordinality s(stream_id, n) order by s.n);

  -- A member with a failing expectation answers its first failing stream and writes nothing.
  return query
    select distinct on (members[g.k]) g.k, 'wrong_revision'::text, heads[g.k], null::bigint, null::uuid[]
      from generate_subscripts(streams, 1) g(k)
     where events_expectation_fails(expected[g.k], heads[g.k])
     order by members[g.k], g.k;
  refused := array(select distinct members[g.k] from generate_subscripts(streams, 1) g(k) where events_expectation_fails(expected[g.k], heads[g.k]));

  if exists (select 1 from unnest(event_entries) x(entry) where members[x.entry] <> all(refused)) then
    base := pg_current_xact_id()::text::bigint << 20;
  end if;
  -- Accepted events are numbered in input order (members, then their streams, then events).
  return query
    with accepted as (
      select i, row_number() over (order by i) as n from generate_subscripts(ids, 1) i where members[event_entries[i]] <> all(refused)
    ), written as (
      insert into events (position, event_id, stream_id, revision, type, data, metadata)
      select base + a.n, ids[a.i], streams[event_entries[a.i]],
             heads[event_entries[a.i]] + row_number() over (partition by event_entries[a.i] order by a.i),
             types[a.i], datas[a.i], metadatas[a.i]
        from accepted a
    )
    select g.k, 'appended'::text, heads[g.k] + coalesce(c.added, 0), coalesce(base + c.last, 0), null::uuid[]
      from generate_subscripts(streams, 1) g(k)
      left join (select event_entries[a.i] as entry_no, count(*) as added, max(a.n) as last from accepted a group by 1) c on c.entry_no = g.k
     where members[g.k] <> all(refused);
end
$$;
