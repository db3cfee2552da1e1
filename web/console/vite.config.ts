import react from "@vitejs/plugin-react";
import { defineConfig } from "vite";

// Served by `portico serve` under /console/ (the management port); built into dist/.
export default defineConfig({
  base: "/console/",
  plugins: [react()],
  // one bundle for now (~160 kB gzipped with the component library): pages split by route
  // when the console grows
  build: { outDir: "dist", emptyOutDir: true, sourcemap: false, chunkSizeWarningLimit: 800 },
});
