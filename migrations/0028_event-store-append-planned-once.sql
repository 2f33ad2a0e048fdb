-- events_append (migration 0024) with the same inputs, answers and statements, planned once per
-- connection and always through the indexes. PL/pgSQL caches a statement's plan per connection:
-- one planned while `events` was small (a new database, a new installation) seq-scanned it for the
-- idempotency check and kept doing so as the table grew (1 ms and more per append after a few
-- thousand events, against 0.3 ms), and the head lookup was planned afresh at every call (a custom
-- plan, 0.1 ms). Every lookup here is by key, so the generic plan over the indexes is the right one
-- whatever the table's size. The check for a stream named twice (which sends the call to the
-- member-by-member function) is skipped for a call of one stream.
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
