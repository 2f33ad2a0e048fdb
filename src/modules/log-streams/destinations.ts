import { PutObjectCommand, S3Client, S3ServiceException } from '@aws-sdk/client-s3';
import { NodeHttpHandler } from '@smithy/node-http-handler';
import type { HttpsClient, OutboundRequest, OutboundSend } from '../../platform/outbound/https-client.ts';
import { newId } from '../../platform/ids.ts';
import type { AnyLogStreamConfig, LogStreamConfig } from './config.ts';
import type { LogStreamType } from './events.ts';

/** The service's short name: the default tag values and the client name receivers see. */
const SHORT_NAME = 'iam';
const USER_AGENT = 'IAM-LogStream/1.0';
export const DEFAULT_OBJECT_PREFIX = 'iam-logs/';

/** The body of every delivery (spec, Log stream delivery): the audit entry, flat. */
export interface LogRecord {
  action: string;
  resource: string | null;
  resourceId: string | null;
  status: string;
  userId: string | null;
  clientIp: string | null;
  userAgent: string | null;
  metadata: Record<string, unknown> | null;
  timestamp: string;
}

/** Sites of the hosted log platform by region (its documented intake hosts). */
const PLATFORM_A_SITES: Record<LogStreamConfig['LOG_PLATFORM_A']['region'], string> = {
  us1: 'datadoghq.com',
  us3: 'us3.datadoghq.com',
  us5: 'us5.datadoghq.com',
  eu1: 'datadoghq.eu',
  ap1: 'ap1.datadoghq.com',
};

export interface DestinationDeps {
  client: HttpsClient;
  /** IAM_LOG_PLATFORM_A_URL: replaces the region's intake URL (tests, proxies). */
  platformAUrl: string | undefined;
  timeoutMs: number;
}

const json = { 'content-type': 'application/json', 'user-agent': USER_AGENT };

/** `{prefix}YYYY/MM/DD/HH-mm-ss-<uuid>.json` (spec, Log streams) in UTC. */
export function objectKey(prefix: string, at: Date): string {
  const [date, time] = at.toISOString().split('T') as [string, string];
  return `${prefix}${date.replaceAll('-', '/')}/${time.slice(0, 8).replaceAll(':', '-')}-${newId()}.json`;
}

/**
 * How one record reaches one stream: an HTTPS POST in the receiver's intake format, or an object
 * written with the S3 client. `payload` is the record as JSON, the same for every attempt.
 */
export function destinationRequest(deps: DestinationDeps, type: LogStreamType, config: AnyLogStreamConfig, payload: string): OutboundRequest | OutboundSend {
  switch (type) {
    case 'WEBHOOK': {
      const { url, headers } = config as LogStreamConfig['WEBHOOK'];
      return { url, headers: { ...headers, ...json }, body: payload };
    }
    case 'LOG_PLATFORM_A': {
      // The HTTP log intake (v2): an array of entries; `message` holds the record as JSON, which the platform parses into attributes.
      const { apiKey, region, service, source } = config as LogStreamConfig['LOG_PLATFORM_A'];
      const record = JSON.parse(payload) as LogRecord;
      const body = [{ ddsource: source ?? SHORT_NAME, service: service ?? SHORT_NAME, ddtags: `action:${record.action},status:${record.status}`, message: payload }];
      const url = deps.platformAUrl ?? `https://http-intake.logs.${PLATFORM_A_SITES[region]}/api/v2/logs`;
      return { url, headers: { ...json, 'dd-api-key': apiKey }, body: JSON.stringify(body) };
    }
    case 'LOG_PLATFORM_B': {
      // The HTTP event collector: one event object, authenticated by the collector's token.
      const { hecUrl, hecToken, index, source, sourcetype } = config as LogStreamConfig['LOG_PLATFORM_B'];
      const record = JSON.parse(payload) as LogRecord;
      const body = { time: new Date(record.timestamp).getTime() / 1000, event: record, source: source ?? SHORT_NAME, sourcetype: sourcetype ?? '_json', index: index ?? 'main' };
      return { url: `${hecUrl.replace(/\/+$/, '')}/services/collector/event`, headers: { ...json, authorization: `Splunk ${hecToken}` }, body: JSON.stringify(body) };
    }
    case 'OBJECT_STORE':
      return objectUpload(deps, config as LogStreamConfig['OBJECT_STORE'], payload);
  }
}

/** One object per record, written with the AWS SDK's S3 client over the outbound client's guarded connections. */
function objectUpload(deps: DestinationDeps, config: LogStreamConfig['OBJECT_STORE'], payload: string): OutboundSend {
  return {
    async send(signal) {
      const started = performance.now();
      const elapsed = () => Math.round(performance.now() - started);
      const s3 = new S3Client({
        region: config.region,
        credentials: { accessKeyId: config.accessKeyId, secretAccessKey: config.secretAccessKey },
        ...(config.endpoint ? { endpoint: config.endpoint } : {}),
        forcePathStyle: config.forcePathStyle ?? false,
        maxAttempts: 1, // the delivery engine schedules retries
        requestHandler: new NodeHttpHandler({ httpsAgent: deps.client.guardedAgent(), requestTimeout: deps.timeoutMs, connectionTimeout: deps.timeoutMs }),
      });
      const key = objectKey(config.prefix ?? DEFAULT_OBJECT_PREFIX, new Date(JSON.parse(payload).timestamp as string));
      try {
        const answer = await s3.send(
          new PutObjectCommand({ Bucket: config.bucket, Key: key, Body: payload, ContentType: 'application/json' }),
          { abortSignal: AbortSignal.any([signal, AbortSignal.timeout(deps.timeoutMs)]) },
        );
        return { ok: true, status: answer.$metadata.httpStatusCode ?? 200, body: null, durationMs: elapsed(), error: null };
      } catch (error) {
        const status = error instanceof S3ServiceException ? (error.$metadata.httpStatusCode ?? null) : null;
        const message = error instanceof Error ? `${error.name}: ${error.message}` : String(error);
        return { ok: false, status, body: null, durationMs: elapsed(), error: message.slice(0, 1024) };
      }
      // No s3.destroy(): it would destroy the shared agent; the client holds nothing else.
    },
  };
}
