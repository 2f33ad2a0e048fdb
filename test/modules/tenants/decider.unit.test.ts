import { describe, it } from 'vitest';
import { tenantDecider } from '../../../src/modules/tenants/decider.ts';
import type { TenantEvent } from '../../../src/modules/tenants/events.ts';
import { deciderSpec } from '../../support/decider-spec.ts';

const spec = deciderSpec(tenantDecider);
const created: TenantEvent = { type: 'TenantCreated', data: { tenantId: 't1', name: 'acme', displayName: 'Acme' } };

describe('tenant decider', () => {
  it('creates a tenant once', () => {
    spec.given([]).when({ type: 'CreateTenant', tenantId: 't1', name: 'acme', displayName: 'Acme' }).then([created]);
    spec.given([created]).when({ type: 'CreateTenant', tenantId: 't1', name: 'acme', displayName: 'Acme' }).thenThrows('TENANT_EXISTS');
  });

  it('updates the display name only when it changes', () => {
    spec.given([created]).when({ type: 'UpdateTenant', displayName: 'Acme 2' }).then([
      { type: 'TenantUpdated', data: { tenantId: 't1', displayName: 'Acme 2' } },
    ]);
    spec.given([created]).when({ type: 'UpdateTenant', displayName: 'Acme' }).then([]);
    spec.given([created]).when({ type: 'UpdateTenant' }).then([]);
    spec.given([]).when({ type: 'UpdateTenant', displayName: 'x' }).thenThrows('NOT_FOUND');
  });

  it('deletes a tenant, but never the platform tenant, and not twice', () => {
    spec.given([created]).when({ type: 'DeleteTenant', platformTenant: 'platform' }).then([
      { type: 'TenantDeleted', data: { tenantId: 't1', name: 'acme' } },
    ]);
    spec.given([created]).when({ type: 'DeleteTenant', platformTenant: 'acme' }).thenThrows('VALIDATION_ERROR');
    const deleted: TenantEvent = { type: 'TenantDeleted', data: { tenantId: 't1', name: 'acme' } };
    spec.given([created, deleted]).when({ type: 'DeleteTenant', platformTenant: 'platform' }).thenThrows('NOT_FOUND');
    spec.given([created, deleted]).when({ type: 'UpdateTenant', displayName: 'x' }).thenThrows('NOT_FOUND');
  });
});
