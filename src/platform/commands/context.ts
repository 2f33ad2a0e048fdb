/** Who asks for a command, and from where: it becomes every resulting event's metadata. */
export interface CommandContext {
  tenantId: string; // tenant name (the realm)
  actor: string; // user id, client id or 'system'
  clientIp?: string | null;
  userAgent?: string | null;
  correlationId?: string | null;
  causationId?: string | null;
}

export const systemContext = (tenantId: string, correlationId?: string): CommandContext => ({
  tenantId,
  actor: 'system',
  correlationId: correlationId ?? null,
});
