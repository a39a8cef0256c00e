#!/usr/bin/env node
// Process entry point of the `agent-gateway` command (package `bin`).
import { buildProgram } from './program.js';

await buildProgram().parseAsync(process.argv);
