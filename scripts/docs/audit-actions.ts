import { writeFileSync } from 'node:fs';
import { auditActionsDocument } from '../../src/modules/audit/actions-doc.ts';

writeFileSync(new URL('../../docs/audit-actions.md', import.meta.url), auditActionsDocument());
