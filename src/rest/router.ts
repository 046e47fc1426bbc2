import { router } from './trpc.js';
import { accountsRest } from '../modules/accounts/rest.js';
import { workspacesRest } from '../modules/workspaces/rest.js';
import { systemRest } from '../modules/system/rest.js';

/** Every REST procedure; each module contributes its own router. Order matters where paths overlap. */
export const restRouter = router({
  accounts: accountsRest,
  workspaces: workspacesRest,
  system: systemRest,
});

export type RestRouter = typeof restRouter;
