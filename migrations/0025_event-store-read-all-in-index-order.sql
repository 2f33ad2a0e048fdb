-- A page of the global log, always read by walking the primary key in order and stopping after
-- `max_events` rows. Written as a plain query, the planner had to guess how many rows lie between
-- `after` and the visibility bound (a function call it cannot evaluate); on a table without fresh
-- statistics it guessed a few hundred, chose a bitmap scan of the whole range plus a sort, and so
-- read every later event to return one page: replaying 100,000 events cost quadratic time
-- (12,000 events/s against 125,000 once analysed). Forbidding the sort leaves the ordered index
-- scan, whose cost is the page whatever the statistics say.
create function events_read_all(after bigint, max_events int)
returns table ("position" bigint, event_id uuid, stream_id text, revision bigint, type text, data jsonb, metadata jsonb)
language sql stable
set enable_sort = off
as $$
  select e.position, e.event_id, e.stream_id, e.revision, e.type, e.data, e.metadata
    from events e
   where e.position > after and e.position < events_visible_bound()
   order by e.position
   limit max_events
$$;
