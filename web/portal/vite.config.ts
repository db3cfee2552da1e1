import react from "@vitejs/plugin-react";
import { defineConfig } from "vitest/config";

// Served by `portico serve` under /portal/ (the management port); built into dist/.
export default defineConfig({
  base: "/portal/",
  plugins: [react()],
  // the first load holds React, the router and the component library; the API reference
  // (Redoc) and the usage charts (Recharts) come with their pages only (App.tsx, AppPage.tsx)
  build: {
    outDir: "dist",
    emptyOutDir: true,
    sourcemap: false,
    chunkSizeWarningLimit: 1200,
  },
  test: {
    environment: "jsdom",
    setupFiles: ["src/test/setup.ts"],
    include: ["src/**/*.test.{ts,tsx}"],
  },
});
