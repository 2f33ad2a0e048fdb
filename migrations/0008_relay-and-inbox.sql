-- The relay's place in the global log, per topic: the position of the last event the bus
-- acknowledged. Written only by the relay holding the topic's leader lock, after the publish.
create table relay_checkpoints (
  topic      text primary key,
  position   bigint not null default 0,
  updated_at timestamptz not null default now()
);

-- Events a consumer group has applied. The row is inserted in the transaction of the consumer's
-- effect, so a redelivered event finds it and has no second effect, across restarts too.
create table inbox (
  group_id   text not null,
  event_id   text not null,
  applied_at timestamptz not null default now(),
  primary key (group_id, event_id)
);
