/// <reference types="vitest/config" />
import react from '@vitejs/plugin-react'
import { defineConfig } from 'vite'

// Served by FastAPI under /ui/ (backend/src/dynamic_tools/api/routes/ui.py).
export default defineConfig({
  base: '/ui/',
  plugins: [react()],
  build: { outDir: 'dist', sourcemap: false, chunkSizeWarningLimit: 900 },
  server: { proxy: { '^/(workflow|workflows|tools|runs|catalogs|demo|healthz|readyz|me|keys|audit)': 'http://127.0.0.1:8000' } },
  test: { environment: 'jsdom', include: ['src/**/*.test.{ts,tsx}'], css: false },
})
