-- The standing tuples are the open lifetimes of fga_tuple_history: fga_tuples becomes a view of
-- them instead of a second table written by the fga projection. Each tuple change then writes one
-- row and four index entries instead of two rows and six index entries (two of them 7-column text
-- keys): the tuple read models were about 75% of PostgreSQL's time in a bulk tuple write.
-- The decider writes a tuple only while it is absent, so at most one lifetime of a tuple is open.
drop table fga_tuples;
create view fga_tuples as
  select tenant_id, object_type, object_id, relation, subject_type, subject_id, subject_relation, written_at as created_at
    from fga_tuple_history
   where deleted_at is null;
-- GET /api/fga/tuples pages in the order of the history's object index (fga_tuple_history_by_object),
-- and filters on the subject side use its subject index.

