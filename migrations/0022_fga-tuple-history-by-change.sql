-- A tuple lifetime's last change (its deletion, else its write): asOf for a recent instant reads
-- only the lifetimes that changed after it, a few rows instead of a walk per engine lookup. The
-- two times are included so that counting those lifetimes is an index-only scan.
create index fga_tuple_history_by_change on fga_tuple_history (tenant_id, (coalesce(deleted_at, written_at))) include (written_at, deleted_at);
