/**
 * Folds concurrent requests into groups written by one call (one transaction, one WAL flush).
 * A request waits for company only until the end of the event loop's turn (setImmediate): the
 * requests submitted in one turn (the HTTP requests read in one poll, say) leave together; then,
 * while fewer than `maxInFlight` groups are being written, the queue goes out at once, and requests
 * arriving meanwhile queue and leave together as the next group, so the group size follows the
 * load. Each request settles on its own (its slot in the group's answer).
 */
export class GroupCommitter<Request, Result> {
  private queue: { request: Request; weight: number; resolve: (result: Result) => void; reject: (error: unknown) => void }[] = [];
  private inFlight = 0;
  private pumpScheduled = false;
  private readonly scheduledPump = () => {
    this.pumpScheduled = false;
    this.pump();
  };

  constructor(
    private readonly options: {
      /** Writes a group; answers one result or error per request, in order. */
      write(requests: Request[]): Promise<(Result | Error)[]>;
      maxInFlight: number;
      /** A group's total weight (events) stays at or under this, unless one request alone exceeds it. */
      maxWeight: number;
      weigh(request: Request): number;
    },
  ) {}

  submit(request: Request): Promise<Result> {
    return new Promise((resolve, reject) => {
      this.queue.push({ request, weight: this.options.weigh(request), resolve, reject });
      if (!this.pumpScheduled) {
        this.pumpScheduled = true;
        setImmediate(this.scheduledPump);
      }
    });
  }

  private pump(): void {
    while (this.inFlight < this.options.maxInFlight && this.queue.length > 0) {
      let weight = this.queue[0]!.weight;
      let size = 1;
      while (size < this.queue.length && weight + this.queue[size]!.weight <= this.options.maxWeight) {
        weight += this.queue[size]!.weight;
        size += 1;
      }
      const group = this.queue.splice(0, size);
      this.inFlight += 1;
      this.options
        .write(group.map((entry) => entry.request))
        .then(
          (results) => group.forEach((entry, i) => (results[i] instanceof Error ? entry.reject(results[i]) : entry.resolve(results[i] as Result))),
          (error: unknown) => group.forEach((entry) => entry.reject(error)),
        )
        .finally(() => {
          this.inFlight -= 1;
          this.pump();
        });
    }
  }
}
