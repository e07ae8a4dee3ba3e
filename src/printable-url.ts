/** A url (PostgreSQL, Redis) as messages may print it: without its password, wherever it was written. */
export const printableUrl = (url: string): string => {
  try {
    const parsed = new URL(url);
    parsed.password = '';
    parsed.searchParams.delete('password');
    return parsed.toString();
  } catch {
    return url.replace(/:[^:@/]*@/, '@');
  }
};
