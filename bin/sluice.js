#!/usr/bin/env node
// The `sluice` command: runs the TypeScript entry (bin/sluice.ts) through tsx,
// so the CLI needs no build step. tsx is installed by `npm ci`.
import { tsImport } from 'tsx/esm/api';

await tsImport('./sluice.ts', import.meta.url);
