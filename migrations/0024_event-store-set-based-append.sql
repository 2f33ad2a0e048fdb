-- events_append (migration 0013) with the same inputs and answers, with a set-based path for the
-- common call, so that a call of many streams (a bulk tuple write: 100 streams of one event each)
-- costs a few statements instead of a loop over members with one head lookup per stream: every
-- head in one statement, every accepted event in one insert. The member-by-member function of 0013
-- (renamed) still answers the calls where members depend on each other: two members appending to
-- one stream (the later one must see the earlier one's events) or event ids already recorded (a
-- retried append answers its original result, or a conflict).
alter function events_append(int[], text[], text[], int[], uuid[], text[], jsonb[], jsonb[]) rename to events_append_by_member;

create function events_expectation_fails(expected text, head bigint) returns boolean
language sql immutable as $$
  select case expected
    when 'any' then false
    when 'no_stream' then head <> -1
    when 'stream_exists' then head < 0
    else head <> expected::bigint
  end
$$;

create function events_append(
  members int[], streams text[], expected text[],
  event_entries int[], ids uuid[], types text[], datas jsonb[], metadatas jsonb[]
) returns table (out_entry int, out_outcome text, out_revision bigint, out_position bigint, out_conflicting uuid[])
language plpgsql as $$
declare
  heads bigint[];
  -- Members with a failing expectation: they write nothing.
  refused int[];
  -- xid8 << 20, taken only after every stream lock is held (see docs/architecture.md).
  base bigint;
begin
  if (select count(distinct s) from unnest(streams) s) < cardinality(streams)
     or exists (select 1 from events e where e.event_id = any(ids)) then
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
