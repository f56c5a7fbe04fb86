import { defineConfig } from "vitest/config";

export default defineConfig({
  test: { include: ["test/**/*.test.ts", "test/**/*.test.tsx"], reporters: ["dot"] },
  esbuild: { jsx: "automatic", jsxImportSource: "preact" },
});
