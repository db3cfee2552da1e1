import react from "@vitejs/plugin-react";
import { defineConfig } from "vite";

// Served by `portico serve` under /console/ (the management port); built into dist/.
export default defineConfig({
  base: "/console/",
  plugins: [react()],
  // the main bundle holds React and the component library (~160 kB gzipped); the charts
  // come with the analytics page (App.tsx)
  build: { outDir: "dist", emptyOutDir: true, sourcemap: false, chunkSizeWarningLimit: 800 },
});
