-- The durable queue of outbound deliveries (src/platform/outbound), shared by webhooks and log
-- streams (`feature`). A consumer group inserts rows in its inbox transaction, so each event reaches
-- each target once; workers claim due rows with FOR UPDATE SKIP LOCKED and lease them by moving
-- next_attempt_at past the request's timeout, so no transaction stays open during a request and a
-- worker that dies mid-request leaves the row to be claimed again when the lease ends.
create table outbound_deliveries (
  id                   uuid primary key,
  feature              text not null,
  tenant_id            text not null,
  target_id            text not null,
  event_id             text not null,
  event_type           text not null,
  -- The body exactly as sent: every attempt repeats it.
  payload              text not null,
  -- pending (never tried), retrying, delivered, failed (no attempt left), cancelled (target gone).
  status               text not null,
  attempts             integer not null default 0,
  -- When the next attempt is due (or the lease of the one in flight ends); null once settled.
  next_attempt_at      timestamptz,
  last_response_status integer,
  last_response_body   text,
  last_duration_ms     integer,
  last_error           text,
  created_at           timestamptz not null,
  updated_at           timestamptz not null
);
create unique index outbound_deliveries_once on outbound_deliveries (feature, target_id, event_id);
create index outbound_deliveries_due on outbound_deliveries (feature, next_attempt_at) where next_attempt_at is not null;
create index outbound_deliveries_by_target on outbound_deliveries (tenant_id, feature, target_id, created_at desc, id desc);

-- Every attempt of a delivery, as made.
create table outbound_attempts (
  delivery_id     uuid not null references outbound_deliveries (id) on delete cascade,
  attempt         integer not null,
  started_at      timestamptz not null,
  duration_ms     integer not null,
  response_status integer,
  -- At most the first 1 KB of the answer.
  response_body   text,
  error           text,
  primary key (delivery_id, attempt)
);

-- Consecutive failed attempts per target: a success resets it, the feature acts on a threshold.
create table outbound_targets (
  feature              text not null,
  target_id            text not null,
  consecutive_failures integer not null default 0,
  primary key (feature, target_id)
);
