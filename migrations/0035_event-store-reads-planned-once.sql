-- Two reads that every login (and most commands and appends) makes, planned once per connection
-- instead of at every call.
--
-- The subscriptions' read of the log's tail (src/platform/eventstore/postgres.ts readTail): a page
-- after a position and, from the same snapshot, the log's last position (whether committed events
-- lie past the page that readers may not see yet). It was a query joining max(position) to
-- events_read_all, and both were planned at every call: the outer query (0.2 ms of PostgreSQL) and,
-- inside the SQL function, which a SET clause keeps from being inlined or cached, its page query
-- (0.14 ms) -- about a third of the read's PostgreSQL time, once for every batch of appends (about
-- once a login). As PL/pgSQL, the statements are planned once per connection, always through the
-- primary key (0028's generic-plan rules: every lookup here is by key range, so the plan is right
-- whatever the table's size). A stable function's statements all read the caller's snapshot, so the
-- page and the last position still come from one. The page is the rows of events_read_all (same
-- visibility bound, same order), each with the last position; an empty page is one row of nulls
-- with it.
create function events_read_tail(after bigint, max_events int)
returns table ("position" bigint, event_id uuid, stream_id text, revision bigint, type text, data jsonb, metadata jsonb, last_position bigint)
language plpgsql stable
set plan_cache_mode = force_generic_plan
set enable_seqscan = off
set enable_sort = off
as $$
declare
  head bigint := (select max(e.position) from events e);
begin
  return query
    select e.position, e.event_id, e.stream_id, e.revision, e.type, e.data, e.metadata, head
      from events e
     where e.position > after and e.position < events_visible_bound()
     order by e.position
     limit max_events;
  if not found then
    return query select null::bigint, null::uuid, null::text, null::bigint, null::text, null::jsonb, null::jsonb, head;
  end if;
end
$$;

-- The tails of several streams, each from its own revision (src/platform/eventstore/postgres.ts
-- readStreams: a command loading its states, a login its account), in stream then revision order.
-- As a query it was planned at every call, 0.25 ms of PostgreSQL against 0.1 ms to run; a named
-- statement would have kept a generic plan made while `events` was small (0028's trap), so it is
-- a function with 0028's rules: one lookup of the (stream_id, revision) key per stream.
create function events_read_streams(streams text[], from_revisions bigint[])
returns table ("position" bigint, event_id uuid, stream_id text, revision bigint, type text, data jsonb, metadata jsonb)
language plpgsql stable
set plan_cache_mode = force_generic_plan
set enable_seqscan = off
as $$
begin
  return query
    select e.position, e.event_id, e.stream_id, e.revision, e.type, e.data, e.metadata
      from unnest(streams, from_revisions) as tail(tail_stream, from_revision)
      join events e on e.stream_id = tail.tail_stream and e.revision >= tail.from_revision
     order by e.stream_id, e.revision;
end
$$;
