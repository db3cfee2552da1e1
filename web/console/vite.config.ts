import react from "@vitejs/plugin-react";
import { defineConfig } from "vitest/config";

// Served by `portico serve` under /console/ (the management port); built into dist/.
export default defineConfig({
  base: "/console/",
  plugins: [react()],
  // every page is its own chunk (App.tsx): the sign-in route loads React, the component
  // library and the sign-in form (~100 kB gzipped); the charts come with the analytics
  // page, the form generator with the revision editor
  build: { outDir: "dist", emptyOutDir: true, sourcemap: false, chunkSizeWarningLimit: 800 },
  // the component tests (npm test): jsdom, the components as the browser would render them
  test: {
    environment: "jsdom",
    setupFiles: ["src/test/setup.ts"],
    include: ["src/**/*.test.{ts,tsx}"],
    css: false,
    // a busy two-core machine runs them beside the rest of the suite: one jsdom per worker,
    // not per file (each test cleans up what it rendered and stubbed: test/setup.ts)
    testTimeout: 30_000,
    isolate: false,
    // its imports name dayjs's plugins without their extension, which Vite resolves and
    // Node does not
    server: { deps: { inline: ["@rjsf/mantine"] } },
  },
});
