-- A target's delivery counts kept as they change, rather than counted over its whole delivery log
-- at each read (docs/performance.md, "Outbound delivery (session 16, webhooks)"). The delivery log's
-- total (GET /api/webhooks/{id}/deliveries) was a count(*) of all the target's deliveries, and the
-- log streams' figures an aggregate of them with a sub-select into outbound_attempts per delivery:
-- 1 to 3 s for a target with a few hundred thousand rows. The statements that add deliveries and
-- record their outcomes (queue.ts) update these rows in the same statement or transaction, so the
-- reads cost one row whatever the log's size.
create table outbound_target_counts (
  target_id        text not null,
  feature          text not null,
  tenant_id        text not null,
  -- Rows of the delivery log (outbound_deliveries), whatever their status.
  deliveries       bigint not null default 0,
  -- Of them, those delivered (a delivered delivery stays delivered).
  delivered        bigint not null default 0,
  -- The latest updated_at of a delivered one.
  last_delivery_at timestamptz,
  -- Attempts that ended in an error (outbound_attempts.error), the latest one's error and start.
  errors           bigint not null default 0,
  last_error       text,
  last_error_at    timestamptz,
  primary key (target_id, feature, tenant_id)
);

insert into outbound_target_counts (target_id, feature, tenant_id, deliveries, delivered, last_delivery_at)
  select target_id, feature, tenant_id, count(*), count(*) filter (where status = 'delivered'), max(updated_at) filter (where status = 'delivered')
    from outbound_deliveries group by target_id, feature, tenant_id;

update outbound_target_counts c set errors = e.errors, last_error = e.last_error, last_error_at = e.last_error_at
  from (select d.target_id, d.feature, d.tenant_id, count(*) as errors,
               (array_agg(a.error order by a.started_at desc))[1] as last_error, max(a.started_at) as last_error_at
          from outbound_attempts a join outbound_deliveries d on d.id = a.delivery_id
         where a.error is not null
         group by d.target_id, d.feature, d.tenant_id) e
 where c.target_id = e.target_id and c.feature = e.feature and c.tenant_id = e.tenant_id;
