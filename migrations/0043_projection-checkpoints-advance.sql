-- A projection group sent whole in one write (src/platform/projections/checkpoints.ts): its batches'
-- statements were issued on the checkpoints their workers expected, before the checkpoints were
-- read. This moves each checkpoint from the expected position to the one reached, and raises when
-- one stands elsewhere (another runner applied the batch, a rebuild reset it): the transaction is
-- then aborted, so the commit sent behind it in the same write rolls the batches' writes back and
-- the group is applied again, each batch on the checkpoint it reads. Called with the group's
-- advisory locks held (taken earlier in the transaction), so its snapshot sees the last commit of
-- every other applier of these checkpoints.
create function projection_checkpoints_advance(names text[], expected bigint[], reached bigint[]) returns void
language plpgsql as $$
declare
  moved bigint;
begin
  update projection_checkpoints c set position = v.reached, updated_at = now()
    from unnest(names, expected, reached) as v(name, expected, reached)
   where c.name = v.name and c.position = v.expected;
  get diagnostics moved = row_count;
  if moved <> cardinality(names) then
    raise exception 'a projection checkpoint moved since its batch was read' using errcode = 'serialization_failure';
  end if;
end $$;
