import * as runtime from "@prisma/client/runtime/index-browser";
const Decimal = runtime.Decimal;
const NullTypes = {
  DbNull: runtime.NullTypes.DbNull,
  JsonNull: runtime.NullTypes.JsonNull,
  AnyNull: runtime.NullTypes.AnyNull
};
const DbNull = runtime.DbNull;
const JsonNull = runtime.JsonNull;
const AnyNull = runtime.AnyNull;
const ModelName = {
  User: "User",
  Session: "Session",
  Account: "Account",
  Verification: "Verification",
  ApiToken: "ApiToken",
  Workspace: "Workspace",
  WorkspaceMember: "WorkspaceMember",
  WorkspaceInvitation: "WorkspaceInvitation",
  Target: "Target",
  Asset: "Asset",
  AssetCount: "AssetCount",
  AssetDiscovery: "AssetDiscovery",
  AssetTarget: "AssetTarget",
  Scan: "Scan",
  ScanStep: "ScanStep",
  Finding: "Finding",
  FindingCount: "FindingCount",
  FindingTargetCount: "FindingTargetCount",
  FindingTarget: "FindingTarget",
  FindingEvent: "FindingEvent",
  Template: "Template",
  WorkspaceDiscoverySettings: "WorkspaceDiscoverySettings",
  WorkspaceTemplateRunSettings: "WorkspaceTemplateRunSettings",
  WorkspaceTemplateSetting: "WorkspaceTemplateSetting",
  Tool: "Tool",
  WorkspaceToolSetting: "WorkspaceToolSetting",
  ToolKey: "ToolKey",
  SystemConfig: "SystemConfig",
  Conversation: "Conversation",
  Message: "Message",
  ToolCall: "ToolCall",
  McpServerConfig: "McpServerConfig",
  WorkspaceApiKey: "WorkspaceApiKey",
  ModelConfig: "ModelConfig",
  ScanSchedule: "ScanSchedule",
  ScanScheduleRun: "ScanScheduleRun",
  AuditLog: "AuditLog",
  ChangeEvent: "ChangeEvent",
  WebhookEndpoint: "WebhookEndpoint",
  WebhookDelivery: "WebhookDelivery"
};
const TransactionIsolationLevel = runtime.makeStrictEnum({
  ReadUncommitted: "ReadUncommitted",
  ReadCommitted: "ReadCommitted",
  RepeatableRead: "RepeatableRead",
  Serializable: "Serializable"
});
const UserScalarFieldEnum = {
  id: "id",
  name: "name",
  email: "email",
  emailVerified: "emailVerified",
  image: "image",
  role: "role",
  createdAt: "createdAt",
  updatedAt: "updatedAt"
};
const RelationLoadStrategy = {
  query: "query",
  join: "join"
};
const SessionScalarFieldEnum = {
  id: "id",
  expiresAt: "expiresAt",
  token: "token",
  createdAt: "createdAt",
  updatedAt: "updatedAt",
  ipAddress: "ipAddress",
  userAgent: "userAgent",
  userId: "userId"
};
const AccountScalarFieldEnum = {
  id: "id",
  accountId: "accountId",
  providerId: "providerId",
  userId: "userId",
  accessToken: "accessToken",
  refreshToken: "refreshToken",
  idToken: "idToken",
  accessTokenExpiresAt: "accessTokenExpiresAt",
  refreshTokenExpiresAt: "refreshTokenExpiresAt",
  scope: "scope",
  password: "password",
  createdAt: "createdAt",
  updatedAt: "updatedAt"
};
const VerificationScalarFieldEnum = {
  id: "id",
  identifier: "identifier",
  value: "value",
  expiresAt: "expiresAt",
  createdAt: "createdAt",
  updatedAt: "updatedAt"
};
const ApiTokenScalarFieldEnum = {
  id: "id",
  userId: "userId",
  name: "name",
  prefix: "prefix",
  tokenHash: "tokenHash",
  lastUsedAt: "lastUsedAt",
  expiresAt: "expiresAt",
  revokedAt: "revokedAt",
  createdAt: "createdAt"
};
const WorkspaceScalarFieldEnum = {
  id: "id",
  name: "name",
  description: "description",
  isAssetsDiscovery: "isAssetsDiscovery",
  isAutoEnableAssetAfterDiscovered: "isAutoEnableAssetAfterDiscovered",
  archivedAt: "archivedAt",
  ownerId: "ownerId",
  createdAt: "createdAt",
  updatedAt: "updatedAt"
};
const WorkspaceMemberScalarFieldEnum = {
  id: "id",
  workspaceId: "workspaceId",
  userId: "userId",
  role: "role",
  createdAt: "createdAt",
  updatedAt: "updatedAt"
};
const WorkspaceInvitationScalarFieldEnum = {
  id: "id",
  workspaceId: "workspaceId",
  email: "email",
  role: "role",
  invitedById: "invitedById",
  expiresAt: "expiresAt",
  createdAt: "createdAt",
  updatedAt: "updatedAt"
};
const TargetScalarFieldEnum = {
  id: "id",
  workspaceId: "workspaceId",
  value: "value",
  type: "type",
  lastScannedAt: "lastScannedAt",
  createdById: "createdById",
  createdAt: "createdAt",
  updatedAt: "updatedAt"
};
const AssetScalarFieldEnum = {
  id: "id",
  workspaceId: "workspaceId",
  kind: "kind",
  key: "key",
  value: "value",
  data: "data",
  enabled: "enabled",
  parentId: "parentId",
  targetId: "targetId",
  lastScanId: "lastScanId",
  firstSeenAt: "firstSeenAt",
  lastSeenAt: "lastSeenAt",
  dismissedAt: "dismissedAt",
  references: "references"
};
const AssetCountScalarFieldEnum = {
  workspaceId: "workspaceId",
  kind: "kind",
  enabled: "enabled",
  dismissed: "dismissed",
  count: "count"
};
const AssetDiscoveryScalarFieldEnum = {
  id: "id",
  assetId: "assetId",
  workspaceId: "workspaceId",
  source: "source",
  from: "from",
  fromAssetId: "fromAssetId",
  scanId: "scanId",
  firstSeenAt: "firstSeenAt",
  lastSeenAt: "lastSeenAt"
};
const AssetTargetScalarFieldEnum = {
  assetId: "assetId",
  targetId: "targetId",
  firstSeenAt: "firstSeenAt",
  lastSeenAt: "lastSeenAt"
};
const ScanScalarFieldEnum = {
  id: "id",
  workspaceId: "workspaceId",
  targetId: "targetId",
  status: "status",
  options: "options",
  stepsTotal: "stepsTotal",
  stepsDone: "stepsDone",
  assetsFound: "assetsFound",
  findingsInfo: "findingsInfo",
  findingsLow: "findingsLow",
  findingsMedium: "findingsMedium",
  findingsHigh: "findingsHigh",
  findingsCritical: "findingsCritical",
  error: "error",
  requestedById: "requestedById",
  templateVariables: "templateVariables",
  createdAt: "createdAt",
  startedAt: "startedAt",
  finishedAt: "finishedAt",
  updatedAt: "updatedAt"
};
const ScanStepScalarFieldEnum = {
  id: "id",
  scanId: "scanId",
  name: "name",
  position: "position",
  status: "status",
  attempts: "attempts",
  error: "error",
  output: "output",
  startedAt: "startedAt",
  finishedAt: "finishedAt"
};
const FindingScalarFieldEnum = {
  id: "id",
  workspaceId: "workspaceId",
  fingerprint: "fingerprint",
  checkId: "checkId",
  source: "source",
  name: "name",
  severity: "severity",
  description: "description",
  remediation: "remediation",
  matcher: "matcher",
  status: "status",
  evidence: "evidence",
  classification: "classification",
  assetId: "assetId",
  targetId: "targetId",
  lastScanId: "lastScanId",
  occurrences: "occurrences",
  firstSeenAt: "firstSeenAt",
  lastSeenAt: "lastSeenAt",
  fixedAt: "fixedAt",
  dismissReason: "dismissReason",
  dismissComment: "dismissComment",
  dismissedAt: "dismissedAt",
  dismissedById: "dismissedById",
  updatedAt: "updatedAt"
};
const FindingCountScalarFieldEnum = {
  workspaceId: "workspaceId",
  status: "status",
  severity: "severity",
  count: "count"
};
const FindingTargetCountScalarFieldEnum = {
  targetId: "targetId",
  open: "open"
};
const FindingTargetScalarFieldEnum = {
  findingId: "findingId",
  targetId: "targetId",
  firstSeenAt: "firstSeenAt",
  lastSeenAt: "lastSeenAt"
};
const FindingEventScalarFieldEnum = {
  id: "id",
  findingId: "findingId",
  type: "type",
  scanId: "scanId",
  actorId: "actorId",
  comment: "comment",
  createdAt: "createdAt"
};
const TemplateScalarFieldEnum = {
  id: "id",
  workspaceId: "workspaceId",
  fileName: "fileName",
  templateKey: "templateKey",
  name: "name",
  severity: "severity",
  tags: "tags",
  enabled: "enabled",
  builtin: "builtin",
  storageKey: "storageKey",
  checksum: "checksum",
  sizeBytes: "sizeBytes",
  payloadFilesChecksum: "payloadFilesChecksum",
  warnings: "warnings",
  userVariables: "userVariables",
  createdById: "createdById",
  createdAt: "createdAt",
  updatedAt: "updatedAt"
};
const WorkspaceDiscoverySettingsScalarFieldEnum = {
  workspaceId: "workspaceId",
  rootDomains: "rootDomains",
  exclusions: "exclusions",
  wordlist: "wordlist",
  updatedAt: "updatedAt"
};
const WorkspaceTemplateRunSettingsScalarFieldEnum = {
  workspaceId: "workspaceId",
  selection: "selection",
  variables: "variables",
  updatedAt: "updatedAt"
};
const WorkspaceTemplateSettingScalarFieldEnum = {
  workspaceId: "workspaceId",
  templateId: "templateId",
  enabled: "enabled"
};
const ToolScalarFieldEnum = {
  id: "id",
  workspaceId: "workspaceId",
  name: "name",
  category: "category",
  description: "description",
  version: "version",
  builtin: "builtin",
  enabled: "enabled",
  createdAt: "createdAt",
  updatedAt: "updatedAt"
};
const WorkspaceToolSettingScalarFieldEnum = {
  workspaceId: "workspaceId",
  toolId: "toolId",
  enabled: "enabled"
};
const ToolKeyScalarFieldEnum = {
  id: "id",
  toolId: "toolId",
  workspaceId: "workspaceId",
  prefix: "prefix",
  keyHash: "keyHash",
  createdById: "createdById",
  lastUsedAt: "lastUsedAt",
  revokedAt: "revokedAt",
  createdAt: "createdAt"
};
const SystemConfigScalarFieldEnum = {
  id: "id",
  name: "name",
  logoPath: "logoPath",
  updatedAt: "updatedAt",
  updatedBy: "updatedBy"
};
const ConversationScalarFieldEnum = {
  id: "id",
  workspaceId: "workspaceId",
  createdById: "createdById",
  title: "title",
  createdAt: "createdAt",
  updatedAt: "updatedAt"
};
const MessageScalarFieldEnum = {
  id: "id",
  conversationId: "conversationId",
  role: "role",
  content: "content",
  messageType: "messageType",
  metadata: "metadata",
  parts: "parts",
  createdAt: "createdAt"
};
const ToolCallScalarFieldEnum = {
  id: "id",
  messageId: "messageId",
  toolCallId: "toolCallId",
  toolName: "toolName",
  args: "args",
  result: "result",
  isError: "isError",
  position: "position",
  createdAt: "createdAt"
};
const McpServerConfigScalarFieldEnum = {
  id: "id",
  workspaceId: "workspaceId",
  name: "name",
  url: "url",
  transport: "transport",
  headersEncrypted: "headersEncrypted",
  disabled: "disabled",
  allowedTools: "allowedTools",
  timeout: "timeout",
  sseReadTimeout: "sseReadTimeout",
  createdAt: "createdAt",
  updatedAt: "updatedAt"
};
const WorkspaceApiKeyScalarFieldEnum = {
  id: "id",
  workspaceId: "workspaceId",
  name: "name",
  prefix: "prefix",
  keyHash: "keyHash",
  createdById: "createdById",
  lastUsedAt: "lastUsedAt",
  revokedAt: "revokedAt",
  createdAt: "createdAt"
};
const ModelConfigScalarFieldEnum = {
  id: "id",
  workspaceId: "workspaceId",
  baseUrl: "baseUrl",
  model: "model",
  apiKeyEncrypted: "apiKeyEncrypted",
  updatedById: "updatedById",
  createdAt: "createdAt",
  updatedAt: "updatedAt"
};
const ScanScheduleScalarFieldEnum = {
  id: "id",
  workspaceId: "workspaceId",
  targetId: "targetId",
  cron: "cron",
  timeZone: "timeZone",
  options: "options",
  enabled: "enabled",
  nextRunAt: "nextRunAt",
  lastRunAt: "lastRunAt",
  lastScanId: "lastScanId",
  createdById: "createdById",
  createdAt: "createdAt",
  updatedAt: "updatedAt"
};
const ScanScheduleRunScalarFieldEnum = {
  id: "id",
  scheduleId: "scheduleId",
  trigger: "trigger",
  dueAt: "dueAt",
  ranAt: "ranAt",
  started: "started",
  skipped: "skipped",
  outcomes: "outcomes",
  requestedById: "requestedById"
};
const AuditLogScalarFieldEnum = {
  id: "id",
  at: "at",
  workspaceId: "workspaceId",
  actorKind: "actorKind",
  actorId: "actorId",
  actorDisplay: "actorDisplay",
  surface: "surface",
  operation: "operation",
  entityIds: "entityIds",
  outcome: "outcome",
  clientAddress: "clientAddress",
  requestId: "requestId"
};
const ChangeEventScalarFieldEnum = {
  id: "id",
  workspaceId: "workspaceId",
  type: "type",
  at: "at",
  assetId: "assetId",
  findingId: "findingId",
  scanId: "scanId",
  targetId: "targetId",
  data: "data"
};
const WebhookEndpointScalarFieldEnum = {
  id: "id",
  workspaceId: "workspaceId",
  url: "url",
  eventTypes: "eventTypes",
  format: "format",
  secretSealed: "secretSealed",
  enabled: "enabled",
  disabledReason: "disabledReason",
  consecutiveFailures: "consecutiveFailures",
  failingSince: "failingSince",
  lastDeliveryAt: "lastDeliveryAt",
  createdById: "createdById",
  createdAt: "createdAt",
  updatedAt: "updatedAt"
};
const WebhookDeliveryScalarFieldEnum = {
  id: "id",
  endpointId: "endpointId",
  changeEventId: "changeEventId",
  webhookId: "webhookId",
  eventType: "eventType",
  status: "status",
  attempts: "attempts",
  lastStatusCode: "lastStatusCode",
  lastError: "lastError",
  durationMs: "durationMs",
  nextAttemptAt: "nextAttemptAt",
  lastAttemptAt: "lastAttemptAt",
  deliveredAt: "deliveredAt",
  createdAt: "createdAt",
  updatedAt: "updatedAt"
};
const SortOrder = {
  asc: "asc",
  desc: "desc"
};
const JsonNullValueInput = {
  JsonNull
};
const NullableJsonNullValueInput = {
  DbNull,
  JsonNull
};
const QueryMode = {
  default: "default",
  insensitive: "insensitive"
};
const NullsOrder = {
  first: "first",
  last: "last"
};
const JsonNullValueFilter = {
  DbNull,
  JsonNull,
  AnyNull
};
export {
  AccountScalarFieldEnum,
  AnyNull,
  ApiTokenScalarFieldEnum,
  AssetCountScalarFieldEnum,
  AssetDiscoveryScalarFieldEnum,
  AssetScalarFieldEnum,
  AssetTargetScalarFieldEnum,
  AuditLogScalarFieldEnum,
  ChangeEventScalarFieldEnum,
  ConversationScalarFieldEnum,
  DbNull,
  Decimal,
  FindingCountScalarFieldEnum,
  FindingEventScalarFieldEnum,
  FindingScalarFieldEnum,
  FindingTargetCountScalarFieldEnum,
  FindingTargetScalarFieldEnum,
  JsonNull,
  JsonNullValueFilter,
  JsonNullValueInput,
  McpServerConfigScalarFieldEnum,
  MessageScalarFieldEnum,
  ModelConfigScalarFieldEnum,
  ModelName,
  NullTypes,
  NullableJsonNullValueInput,
  NullsOrder,
  QueryMode,
  RelationLoadStrategy,
  ScanScalarFieldEnum,
  ScanScheduleRunScalarFieldEnum,
  ScanScheduleScalarFieldEnum,
  ScanStepScalarFieldEnum,
  SessionScalarFieldEnum,
  SortOrder,
  SystemConfigScalarFieldEnum,
  TargetScalarFieldEnum,
  TemplateScalarFieldEnum,
  ToolCallScalarFieldEnum,
  ToolKeyScalarFieldEnum,
  ToolScalarFieldEnum,
  TransactionIsolationLevel,
  UserScalarFieldEnum,
  VerificationScalarFieldEnum,
  WebhookDeliveryScalarFieldEnum,
  WebhookEndpointScalarFieldEnum,
  WorkspaceApiKeyScalarFieldEnum,
  WorkspaceDiscoverySettingsScalarFieldEnum,
  WorkspaceInvitationScalarFieldEnum,
  WorkspaceMemberScalarFieldEnum,
  WorkspaceScalarFieldEnum,
  WorkspaceTemplateRunSettingsScalarFieldEnum,
  WorkspaceTemplateSettingScalarFieldEnum,
  WorkspaceToolSettingScalarFieldEnum
};
//# sourceMappingURL=prismaNamespaceBrowser.js.map
