const InstanceRole = {
  admin: "admin",
  user: "user"
};
const WorkspaceRole = {
  owner: "owner",
  member: "member"
};
const TargetType = {
  domain: "domain",
  ip: "ip",
  cidr: "cidr",
  url: "url"
};
const AssetKind = {
  host: "host",
  service: "service",
  web: "web",
  certificate: "certificate"
};
const ScanStatus = {
  PENDING: "PENDING",
  IN_PROGRESS: "IN_PROGRESS",
  COMPLETED: "COMPLETED",
  FAILED: "FAILED",
  CANCELLED: "CANCELLED"
};
const Severity = {
  info: "info",
  low: "low",
  medium: "medium",
  high: "high",
  critical: "critical"
};
const FindingStatus = {
  open: "open",
  fixed: "fixed",
  dismissed: "dismissed"
};
const DismissReason = {
  false_positive: "false_positive",
  accepted_risk: "accepted_risk",
  not_applicable: "not_applicable",
  mitigated: "mitigated",
  other: "other"
};
const FindingEventType = {
  opened: "opened",
  seen: "seen",
  fixed: "fixed",
  reopened: "reopened",
  dismissed: "dismissed"
};
export {
  AssetKind,
  DismissReason,
  FindingEventType,
  FindingStatus,
  InstanceRole,
  ScanStatus,
  Severity,
  TargetType,
  WorkspaceRole
};
//# sourceMappingURL=enums.js.map
