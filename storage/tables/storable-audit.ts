// The audit writer the gateway appends through: request data in an entry (resourceId, metadata)
// is put in the storable encoding first (shared/audit/storable-input.ts), so a deny whose call
// carried NUL or an unpaired surrogate is still written, hashed as stored, and answered as an
// audited deny. The writer underneath keeps refusing unstorable text it is handed directly.
import { toStorableAuditInput } from '../../shared/audit/index.js';
import type { AuditWriter } from './audit-writer.js';

export function withStorableText(writer: AuditWriter): AuditWriter {
  return {
    append: (input) => writer.append(toStorableAuditInput(input)),
    flush: () => writer.flush(),
    close: () => writer.close(),
    get pending() {
      return writer.pending;
    },
  };
}
