import * as Prisma from "./internal/prismaNamespaceBrowser.js";
import * as $Enums from "./enums.js";
export * from "./enums.js";
export {
  $Enums,
  Prisma
};
//# sourceMappingURL=browser.js.map
