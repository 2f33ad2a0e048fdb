import type { ConsumerGroup, SubscribeOptions } from './port.ts';

/** Whether a message with this `event-type` header is committed unseen by the subscriber (its `takes` refuses the type). */
export const passedOver = ({ takes }: SubscribeOptions, eventType: string | undefined): boolean =>
  takes !== undefined && eventType !== undefined && !takes(eventType);

/** Each group and topic once, however many members of the group consume here. */
export function distinctGroups(subscriptions: Iterable<{ options: ConsumerGroup }>): ConsumerGroup[] {
  const unique = new Map<string, ConsumerGroup>();
  for (const { options: { groupId, topic } } of subscriptions) unique.set(JSON.stringify([groupId, topic]), { groupId, topic });
  return [...unique.values()];
}
