import { useEffect, useState } from 'preact/hooks';

// A small history router: links are plain <a href>, clicks on same-origin links are handled here.
const listeners = new Set<() => void>();

export const navigate = (to: string, replace = false): void => {
  if (replace) history.replaceState(null, '', to);
  else history.pushState(null, '', to);
  for (const l of listeners) l();
};

addEventListener('popstate', () => {
  for (const l of listeners) l();
});

document.addEventListener('click', (e) => {
  const a = (e.target as Element | null)?.closest?.('a');
  if (!a || e.defaultPrevented || e.button !== 0 || e.metaKey || e.ctrlKey || e.shiftKey) return;
  const href = a.getAttribute('href');
  if (!href?.startsWith('/') || href.startsWith('/api/') || a.hasAttribute('download')) return;
  e.preventDefault();
  navigate(href);
});

export const useLocation = (): { path: string; query: URLSearchParams } => {
  const [, setTick] = useState(0);
  useEffect(() => {
    const l = () => setTick((t) => t + 1);
    listeners.add(l);
    return () => listeners.delete(l);
  }, []);
  return { path: location.pathname, query: new URLSearchParams(location.search) };
};
