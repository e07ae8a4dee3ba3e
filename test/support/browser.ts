import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { type BrowserContext, chromium } from 'playwright-core';

export interface TestBrowser {
  context: BrowserContext;
  close(): Promise<void>;
}

/** Debian's Chromium, headless, with a fresh profile; `rebind.test` resolves to 127.0.0.1 like a rebinding attack. */
export const launchChromium = async (): Promise<TestBrowser> => {
  const profile = mkdtempSync(path.join(tmpdir(), 'proctor-chromium-'));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: '/usr/bin/chromium',
    headless: true,
    viewport: { width: 1400, height: 900 },
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
      '--host-resolver-rules=MAP rebind.test 127.0.0.1',
    ],
  });
  return {
    context,
    close: async () => {
      await context.close();
      rmSync(profile, { recursive: true, force: true });
    },
  };
};

/**
 * Where a browser test saves its page screenshots, for a person to look at: kept when PROCTOR_KEEP_SCREENSHOTS
 * is set (the path is printed), else removed with the test's other temporary files.
 */
export const screenshotDir = (name: string): { dir: string; done(): void } => {
  const dir = mkdtempSync(path.join(tmpdir(), `proctor-${name}-shots-`));
  return {
    dir,
    done: () => {
      if (process.env.PROCTOR_KEEP_SCREENSHOTS) process.stdout.write(`screenshots: ${dir}\n`);
      else rmSync(dir, { recursive: true, force: true });
    },
  };
};
