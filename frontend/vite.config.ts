/// <reference types="vitest/config" />
import react from '@vitejs/plugin-react'
import { defineConfig } from 'vite'

// Served by FastAPI under /ui/ (backend/src/dynamic_tools/api/routes/ui.py).
export default defineConfig({
  base: '/ui/',
  plugins: [react()],
  build: {
    outDir: 'dist',
    sourcemap: false,
    chunkSizeWarningLimit: 900,
    // Named vendor chunks: the graph (React Flow + dagre) and the editor (CodeMirror) load
    // only with the pages that use them.
    rolldownOptions: {
      output: {
        advancedChunks: {
          groups: [
            { name: 'graph', test: /node_modules[\\/](@xyflow|@dagrejs|d3-|classcat|zustand)/ },
            { name: 'editor', test: /node_modules[\\/](@codemirror|@uiw|@lezer|crelt|style-mod|w3c-keyname|yaml)/ },
          ],
        },
      },
    },
  },
  server: { proxy: { '^/(workflow|workflows|tools|runs|catalogs|demo|healthz|readyz)': 'http://127.0.0.1:8000' } },
  test: { environment: 'jsdom', include: ['src/**/*.test.{ts,tsx}'], css: false },
})
