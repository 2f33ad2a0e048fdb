-- The visibility bound counts the appenders of this database only. Transaction ids and pg_locks are
-- the cluster's: an appending transaction held open in another database of the same cluster (another
-- service's, or another test file's) held this database's readers back until it ended, and a reader
-- that pages once (GET /api/events) could stop short. Advisory locks carry their database, so the
-- appender registration of 0031 is matched to this database; the rest is 0031's function unchanged.
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
             bool_or(l.locktype = 'advisory' and l.classid = 1702258030 and l.objid = 0 and l.objsubid = 2
                     and l.database = (select oid from pg_database where datname = current_database())) over (partition by l.pid) as appender
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
