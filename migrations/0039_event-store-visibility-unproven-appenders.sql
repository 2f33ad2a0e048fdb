-- The visibility bound (0031, 0033) skipped a running transaction of the reader's snapshot unless
-- pg_locks showed its id's lock held by a backend registered as an appender. But PostgreSQL makes a
-- new transaction id visible to snapshots (GetNewTransactionId) a moment before it takes the id's
-- lock (XactLockTableInsert): an appender preempted between the two was in the snapshot, had no id
-- lock to show, and so was skipped as a non-appender; its events then committed below a position
-- readers had passed, and were never read (bench:webhooks lost 1 event of 700,000 and 2 of
-- 3,050,000 on a loaded machine, docs/performance.md "Webhooks (session 15, webhooks)").
--
-- The rule is turned round: a running transaction is skipped only when it is shown not to append,
-- i.e. pg_locks shows its id's lock held by a backend that does not hold this database's appender
-- registration (which an appender takes before it has an id, so a backend showing its id's lock
-- without it can never append: events_append refuses it). An id whose lock is not shown (the
-- moment above, a prepared transaction, one that has just ended) bounds the readers, as an appender
-- would; the commit log's look after the lock table still bounds the readers at any transaction that
-- finished since the snapshot.
create or replace function events_visible_bound() returns bigint
language plpgsql stable as $$
declare
  snapshot pg_snapshot := pg_current_snapshot();
  not_appending xid[];
  bound xid8;
begin
  -- Nothing running, or the oldest has finished since (it is the bound either way): no need to
  -- read the lock table (about 2.5 µs a lock held in the cluster).
  if pg_snapshot_xmin(snapshot) = pg_snapshot_xmax(snapshot) or pg_xact_status(pg_snapshot_xmin(snapshot)) is distinct from 'in progress' then
    return pg_snapshot_xmin(snapshot)::text::bigint << 20;
  end if;
  -- First the ids shown not to append (one scan of the lock table), then the commit log: the order matters.
  not_appending := array(
    select s.transactionid from (
      select l.locktype, l.transactionid,
             bool_or(l.locktype = 'advisory' and l.classid = 1702258030 and l.objid = 0 and l.objsubid = 2
                     and l.database = (select oid from pg_database where datname = current_database())) over (partition by l.pid) as appender
        from pg_locks l
       where l.granted and l.pid is not null
         and (l.locktype = 'advisory' or (l.locktype = 'transactionid' and l.mode = 'ExclusiveLock'))
    ) s
    where not s.appender and s.locktype = 'transactionid');
  select min(x) into bound
    from pg_snapshot_xip(snapshot) x
   where xid(x) <> all(not_appending) or pg_xact_status(x) is distinct from 'in progress';
  return coalesce(bound, pg_snapshot_xmax(snapshot))::text::bigint << 20;
end
$$;
