// Debian's chromium (CHROMIUM, default /usr/bin/chromium): Playwright
// downloads no browser (PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1 in CI).
import { defineConfig } from "@playwright/test";

export default defineConfig({
  testDir: "test",
  workers: 1,
  timeout: 30_000,
  reporter: [["list"]],
  use: {
    browserName: "chromium",
    headless: true,
    launchOptions: {
      executablePath: process.env.CHROMIUM || "/usr/bin/chromium",
      args: ["--disable-gpu"],
    },
  },
});
