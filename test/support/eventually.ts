/** Polls `probe` every 20 ms until it returns something other than undefined; rejects after `timeoutMs`. */
export const eventually = async <T>(probe: () => Promise<T | undefined>, timeoutMs = 20_000): Promise<T> => {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > until) throw new Error(`condition not met within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
};
