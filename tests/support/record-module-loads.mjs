// `node --import` this file to record the modules a process loads (module-load-hooks.mjs).
import { register } from 'node:module';

register('./module-load-hooks.mjs', import.meta.url);
