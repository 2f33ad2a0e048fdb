// The public surface of the log-streams module: other modules, the composition root and the read models import only this.
export { errorStatuses } from './errors.ts';
export { logStreamEvents } from './events.ts';
export type { LogStreamCreated, LogStreamDeleted, LogStreamEvent, LogStreamStatusChanged, LogStreamUpdated } from './events.ts';
export type { LogRecord } from './destinations.ts';
export { logStreamsModule } from './module.ts';
export type { LogStreamsModule } from './module.ts';
export { logStreamQueries } from './queries.ts';
export { registerLogStreamRoutes } from './routes.ts';
