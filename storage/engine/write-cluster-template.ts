// `npm run build`'s last gateway step: writes the empty cluster a new data directory starts from
// (cluster-template.ts) beside the built storage engine. Run as `node dist/storage/engine/
// write-cluster-template.js`; it prints the path it wrote.
import { clusterTemplatePath, writeClusterTemplate } from './cluster-template.js';

const path = await clusterTemplatePath();
await writeClusterTemplate(path);
console.info(`wrote the empty database cluster new data directories start from: ${path}`);
