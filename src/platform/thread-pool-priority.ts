import { readlink } from 'node:fs/promises';
import { getPriority, setPriority } from 'node:os';

/** libuv's pool size: UV_THREADPOOL_SIZE as libuv reads it (default 4, at least 1, at most 1024). */
const threadPoolSize = (): number => Math.min(1024, Math.max(1, Number.parseInt(process.env.UV_THREADPOOL_SIZE ?? '', 10) || 4));

/**
 * The thread ids of libuv's pool (Linux): an asynchronous readlink runs on a pool thread, and
 * /proc/thread-self names the thread that reads it. Rounds of concurrent readlinks until every
 * thread of the pool has answered (in practice the first round).
 */
async function threadPoolIds(size: number): Promise<number[]> {
  const ids = new Set<number>();
  for (let round = 0; round < 50 && ids.size < size; round++) {
    const links = await Promise.all(Array.from({ length: size * 4 }, () => readlink('/proc/thread-self')));
    for (const link of links) ids.add(Number(link.split('/').at(-1)));
  }
  return [...ids];
}

/**
 * Lowers the scheduling priority of this process's libuv pool threads (RS256 signatures, argon2
 * hashes, file reads) to `niceness`, the event loop staying at its own: when every core is busy,
 * the loop, which serves every request, is not queued behind the pool's work (a thread's nice
 * value is its own on Linux). Only lowers: a thread already at `niceness` or below (the process
 * started under `nice 15`, say) is left alone, since raising a priority needs privileges and is
 * not what was asked. Answers the threads changed, or [] off Linux.
 */
export async function lowerThreadPoolPriority(niceness: number): Promise<number[]> {
  if (process.platform !== 'linux') return [];
  const lowered = (await threadPoolIds(threadPoolSize())).filter((id) => getPriority(id) < niceness);
  for (const id of lowered) setPriority(id, niceness);
  return lowered;
}
