// Marks a thrown refusal with whom it refused, so the HTTP edge can audit it where every error
// passes (http-edge/refusals.ts) without each route knowing the auditor: the code that throws
// knows the key, client or agent; the edge knows the route, the code and the message.
// Only errors whose tenant is known are marked. A WeakMap, so the mark goes with the error.
import type { RefusalSubject } from './refusal-windows.js';

const marks = new WeakMap<object, RefusalSubject>();

/** Marks the error as a refusal of this subject and returns it (`throw markRefusal(…)`). */
export function markRefusal<E extends object>(error: E, subject: RefusalSubject): E {
  marks.set(error, subject);
  return error;
}

/** Whom the error refused, when it was marked. */
export function refusalSubjectOf(error: unknown): RefusalSubject | undefined {
  return typeof error === 'object' && error !== null ? marks.get(error) : undefined;
}
