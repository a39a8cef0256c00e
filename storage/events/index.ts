// Opens the event bus of a process: PostgreSQL LISTEN/NOTIFY when the database is a server, so
// subscribers see the writes of every process sharing it; in-process otherwise (PGlite is one
// process by design).
import { createEventBus, type EventBus, LocalEventTarget } from '../../shared/events/index.js';
import { createPostgresEventBus, type EventTransportProblem } from './postgres-event-target.js';

export {
  createPostgresEventBus,
  type EventTransportProblem,
  nameEventChannel,
  packNotifications,
} from './postgres-event-target.js';

export interface OpenEventBusOptions {
  /** PostgreSQL connection string: LISTEN/NOTIFY; absent: in-process only. */
  readonly url?: string | undefined;
  readonly schema?: string | undefined;
  readonly onError?: (error: unknown, during: EventTransportProblem) => void;
}

export async function openEventBus(options: OpenEventBusOptions = {}): Promise<EventBus> {
  if (!options.url) {
    const onError = options.onError;
    return createEventBus(
      new LocalEventTarget(
        onError ? { onListenerError: (error) => onError(error, 'deliver') } : {},
      ),
    );
  }
  return createPostgresEventBus({
    url: options.url,
    ...(options.schema ? { schema: options.schema } : {}),
    ...(options.onError ? { onError: options.onError } : {}),
  });
}
