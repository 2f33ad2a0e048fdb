import type { ConsumerGroup } from './port.ts';

/** Each group and topic once, however many members of the group consume here. */
export function distinctGroups(subscriptions: Iterable<{ options: ConsumerGroup }>): ConsumerGroup[] {
  const unique = new Map<string, ConsumerGroup>();
  for (const { options: { groupId, topic } } of subscriptions) unique.set(JSON.stringify([groupId, topic]), { groupId, topic });
  return [...unique.values()];
}
