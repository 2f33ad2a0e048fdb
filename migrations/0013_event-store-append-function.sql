-- One round trip per append: locks, idempotency check, expected-revision check and insert in one
-- statement. No NOTIFY in here: a transaction that notified holds a database-wide lock from its
-- pre-commit through its WAL flush, so notifying appends would flush one after the other; the
-- store notifies after the commit instead (src/platform/eventstore/postgres.ts). Several appends ("members": commands that arrived together) share one call,
-- so they share one transaction and one WAL flush, yet each succeeds or fails on its own: a member
-- whose expectation fails inserts nothing and the others still commit.
--
-- Inputs are parallel arrays. Per stream entry: member, stream id, expected revision ('any',
-- 'no_stream', 'stream_exists' or a revision). Per event: its entry (1-based), id, type, data,
-- metadata. One output row per entry (or one per member for a conflict):
--   appended        out_revision = the stream's last revision, out_position = its last event's
--                   position (0 for an entry without events)
--   duplicate       every event id was recorded before on these streams: the original result
--   conflict        some ids were recorded on other streams or only partly: out_conflicting
--   wrong_revision  out_revision = the stream's head (-1: no stream); the member wrote nothing
create function events_append(
  members int[], streams text[], expected text[],
  event_entries int[], ids uuid[], types text[], datas jsonb[], metadatas jsonb[]
) returns table (out_entry int, out_outcome text, out_revision bigint, out_position bigint, out_conflicting uuid[])
language plpgsql as $$
declare
  head bigint;
  member_no int;
  member_entries int[];
  member_events int[];
  heads bigint[] := array_fill(-1::bigint, array[cardinality(streams)]);
  found_count int;
  matched_count int;
  failed boolean;
  k int;
  -- xid8 << 20, taken only after every stream lock is held (see docs/architecture.md).
  base bigint;
  used_ordinals bigint := 0;
begin
  -- One statement, keys in ascending order (the outer select runs over the sorted subquery), so
  -- two appends sharing streams never wait for each other crosswise.
  perform pg_advisory_xact_lock(l.key)
     from (select distinct hashtextextended(x.stream_id, 0) as key from unnest(streams) x(stream_id) order by 1) l;

  for member_no in select distinct m from unnest(members) m order by m loop
    member_entries := array(select i from generate_subscripts(streams, 1) i where members[i] = member_no order by i);
    member_events := array(select i from generate_subscripts(ids, 1) i where members[event_entries[i]] = member_no order by i);

    select count(*), count(*) filter (where e.stream_id = streams[event_entries[x.i]])
      into found_count, matched_count
      from unnest(member_events) x(i) join events e on e.event_id = ids[x.i];
    if found_count > 0 then
      if matched_count < cardinality(member_events) then
        return query select member_entries[1], 'conflict'::text, null::bigint, null::bigint,
          array(select e.event_id from unnest(member_events) x(i) join events e on e.event_id = ids[x.i]);
      else
        return query select entry, 'duplicate'::text, coalesce(last.revision, -1), coalesce(last.position, 0), null::uuid[]
          from unnest(member_entries) as u(entry)
          left join lateral (
            select e.revision, e.position from events e
             where e.event_id = ids[(select max(x.i) from unnest(member_events) x(i) where event_entries[x.i] = entry)]
          ) last on true;
      end if;
      continue;
    end if;

    failed := false;
    for k, head in
      select u.entry, coalesce((select max(e.revision) from events e where e.stream_id = streams[u.entry]), -1)
        from unnest(member_entries) with ordinality as u(entry, n) order by u.n
    loop
      heads[k] := head;
      failed := case expected[k]
        when 'any' then false
        when 'no_stream' then heads[k] <> -1
        when 'stream_exists' then heads[k] < 0
        else heads[k] <> expected[k]::bigint
      end;
      if failed then
        return query select k, 'wrong_revision'::text, heads[k], null::bigint, null::uuid[];
        exit;
      end if;
    end loop;
    continue when failed;

    if cardinality(member_events) > 0 and base is null then
      base := pg_current_xact_id()::text::bigint << 20;
    end if;
    insert into events (position, event_id, stream_id, revision, type, data, metadata)
    select base + used_ordinals + x.n, ids[x.i], streams[event_entries[x.i]],
           heads[event_entries[x.i]] + row_number() over (partition by event_entries[x.i] order by x.i),
           types[x.i], datas[x.i], metadatas[x.i]
      from unnest(member_events) with ordinality x(i, n);
    return query select entry, 'appended'::text, heads[entry] + coalesce(c.count, 0), coalesce(base + used_ordinals + c.last, 0), null::uuid[]
      from unnest(member_entries) as u(entry)
      left join (
        select event_entries[x.i] as entry_no, count(*) as count, max(x.n) as last
          from unnest(member_events) with ordinality x(i, n) group by 1
      ) c on c.entry_no = entry;
    used_ordinals := used_ordinals + cardinality(member_events);
  end loop;
end
$$;
