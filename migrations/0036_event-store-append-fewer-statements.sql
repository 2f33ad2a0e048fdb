-- events_append (0028, with 0031's registration) in three statements (and the registration's two)
-- instead of about twelve, with the same inputs, answers, locks and durability. PostgreSQL's time a
-- login was led by this call, and each statement of a PL/pgSQL function costs an executor start and
-- end through SPI beside its work; the registration was a statement of its own, the expectation
-- check was run twice (the answers, then the refused members) and the position base once more.
--
-- 1. One statement registers the transaction as an appender (0031's events_register_appender, the
--    one definition of it: the shared 'even' lock and the setting the insert trigger checks, still
--    before the transaction has an id; its two statements cost about 6 µs more than the same
--    expressions written here), takes the streams' locks in ascending key order (the sorted
--    subquery, as before) and tells whether the call goes member by member (an event id already
--    recorded, or a stream named twice). Neither lock gives the transaction an id. The idempotency
--    check reads this statement's snapshot, taken before the locks, as it did when it ran before
--    them: a concurrent append of the same ids that commits in between makes the insert fail on the
--    event_id key, and the store's retry answers it (postgres.ts).
-- 2. The heads are read after the locks are held, in a statement of their own (in READ COMMITTED a
--    statement sees what committed before it started; the heads must include every append that
--    held a stream's lock before this one).
-- 3. One statement checks each stream's expectation, inserts the accepted members' events and
--    answers every entry. The position base is the transaction id, taken only by the insert (after
--    every lock, as 0013 requires), so a call whose members all fail takes no id and writes nothing;
--    the answers' revisions and positions are the inserted rows' own (a call of this path names
--    each stream once).
-- Planning stays 0028's: generic plans, no sequential scan (every lookup is by key).
create or replace function events_append(
  members int[], streams text[], expected text[],
  event_entries int[], ids uuid[], types text[], datas jsonb[], metadatas jsonb[]
) returns table (out_entry int, out_outcome text, out_revision bigint, out_position bigint, out_conflicting uuid[])
language plpgsql
set plan_cache_mode = force_generic_plan
set enable_seqscan = off
as $$
declare
  by_member boolean;
  heads bigint[];
begin
  if pg_current_xact_id_if_assigned() is not null then
    raise exception 'events are appended by a transaction that writes nothing before it (see migration 0031)';
  end if;
  select exists (select 1 from events e where e.event_id = any(ids))
         or (cardinality(streams) > 1 and exists (select 1 from unnest(streams) s group by s having count(*) > 1))
    into by_member
    from (select events_register_appender()) registered,
         (select count(pg_advisory_xact_lock(l.key))
            from (select distinct hashtextextended(x.stream_id, 0) as key from unnest(streams) x(stream_id) order by 1) l) locked;
  if by_member then
    return query select * from events_append_by_member(members, streams, expected, event_entries, ids, types, datas, metadatas);
    return;
  end if;

  heads := array(
    select coalesce((select max(e.revision) from events e where e.stream_id = s.stream_id), -1)
      from unnest(streams) with ordinality s(stream_id, n) order by s.n);

  -- A member with a failing expectation writes nothing and answers its first failing stream; the
  -- accepted events are numbered in input order (members, then their streams, then events).
  return query
    with verdict as (
      select g.k, members[g.k] as member, heads[g.k] as head, events_expectation_fails(expected[g.k], heads[g.k]) as fails
        from generate_subscripts(streams, 1) g(k)
    ), refused as (
      select array_agg(v.member) as list from verdict v where v.fails
    ), accepted as (
      select i, row_number() over (order by i) as n
        from generate_subscripts(ids, 1) i, refused r
       where r.list is null or members[event_entries[i]] <> all(r.list)
    ), written as (
      insert into events (position, event_id, stream_id, revision, type, data, metadata)
      select (pg_current_xact_id()::text::bigint << 20) + a.n, ids[a.i], streams[event_entries[a.i]],
             heads[event_entries[a.i]] + row_number() over (partition by event_entries[a.i] order by a.i),
             types[a.i], datas[a.i], metadatas[a.i]
        from accepted a
      returning stream_id, revision, position
    )
    select v.k,
           case when v.member = any(r.list) then 'wrong_revision' else 'appended' end,
           coalesce(w.revision, v.head),
           case when v.member = any(r.list) then null else coalesce(w.position, 0) end,
           null::uuid[]
      from verdict v
     cross join refused r
      left join (select w.stream_id, max(w.revision) as revision, max(w.position) as position from written w group by 1) w
        on w.stream_id = streams[v.k]
     where not coalesce(v.member = any(r.list), false)
        or v.k = (select min(f.k) from verdict f where f.member = v.member and f.fails);
end
$$;
