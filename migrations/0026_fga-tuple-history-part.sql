-- One FgaTuplesChanged event writes many tuples at one position: a lifetime is keyed by the
-- position of the event that wrote it and the tuple's place among that event's changes (0 for the
-- one-tuple events recorded before it).
alter table fga_tuple_history add column written_part integer not null default 0;
alter table fga_tuple_history drop constraint fga_tuple_history_pkey;
alter table fga_tuple_history add primary key (tenant_id, written_position, written_part);
