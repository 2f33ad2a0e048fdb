-- One tenant's events in log order (GET /api/events, the history feed): a page walks only the
-- tenant's own entries of the index instead of the whole log. The tenant is the metadata's.
create index events_by_tenant on events ((metadata->>'tenantId'), position);
