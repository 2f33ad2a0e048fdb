export interface ErrorDetail {
  path: string;
  message: string;
}

/** The one error type of the service: a machine-readable code, an HTTP status, a safe message. */
export class AppError extends Error {
  constructor(
    readonly code: string,
    readonly status: number,
    message: string,
    readonly details?: ErrorDetail[],
    readonly headers?: Record<string, string>,
  ) {
    super(message);
    this.name = 'AppError';
  }
}

export const notFound = (what = 'Resource'): AppError => new AppError('NOT_FOUND', 404, `${what} not found`);

export const validationError = (message: string, details?: ErrorDetail[]): AppError =>
  new AppError('VALIDATION_ERROR', 400, message, details);
