import { router } from './trpc.js';
import { accountsRest } from '../modules/accounts/rest.js';
import { workspacesRest } from '../modules/workspaces/rest.js';
import { targetsRest } from '../modules/targets/rest.js';
import { assetsRest } from '../modules/assets/rest.js';
import { vulnerabilitiesRest } from '../modules/vulnerabilities/rest.js';
import { scansRest } from '../modules/scans/rest.js';
import { systemRest } from '../modules/system/rest.js';
import { systemConfigsRest } from '../modules/system-configs/rest.js';
import { toolsRest } from '../modules/tools/rest.js';
import { templatesRest } from '../modules/templates/rest.js';
import { agentsRest } from '../modules/agents/rest.js';
import { workspaceApiKeysRest } from '../modules/workspace-api-keys/rest.js';
import { mcpConfigsRest } from '../modules/mcp/rest.js';
import { schedulesRest } from '../modules/schedules/rest.js';
import { auditRest } from '../modules/audit/rest.js';
import { changesRest } from '../modules/changes/rest.js';
import { webhooksRest } from '../modules/webhooks/rest.js';

/** Every REST procedure; each module contributes its own router. Order matters where paths overlap. */
export const restRouter = router({
  accounts: accountsRest,
  // Before workspaces: its GET /api/workspaces/{id} would otherwise take /api/workspaces/api-key(s).
  workspaceApiKeys: workspaceApiKeysRest,
  workspaces: workspacesRest,
  targets: targetsRest,
  assets: assetsRest,
  vulnerabilities: vulnerabilitiesRest,
  scans: scansRest,
  system: systemRest,
  systemConfigs: systemConfigsRest,
  tools: toolsRest,
  templates: templatesRest,
  agents: agentsRest,
  mcpConfigs: mcpConfigsRest,
  scanSchedules: schedulesRest,
  audit: auditRest,
  changes: changesRest,
  webhooks: webhooksRest,
});

export type RestRouter = typeof restRouter;
